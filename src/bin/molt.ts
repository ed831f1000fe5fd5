#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// The only entry point: `molt <verb> …`. Keep it tiny: it wires the process's streams to the CLI.
import { main } from '../cli/main.ts';
import { processIo } from '../cli/io.ts';

process.exitCode = await main(process.argv.slice(2), processIo());
