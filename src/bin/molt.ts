#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// The only entry point: `molt <verb> …`. It imports nothing but Node's module API before turning
// V8's compile cache on: a module imported before that is compiled again on every command.
import { enableCompileCache } from 'node:module';

// V8 keeps the bytecode of the modules a verb loads (in the system's temporary directory), so the
// next command compiles none of them again: about half of a short command's CPU (benchmark P16).
enableCompileCache();
await import('./dispatch.ts');
