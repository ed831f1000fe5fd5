// SPDX-License-Identifier: Apache-2.0
/** The local lab: firmware that plays the bootloader for lab machines (docs/adr/0004 §4). */
export {};
