// SPDX-License-Identifier: Apache-2.0
console.log('molt');
