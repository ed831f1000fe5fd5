// SPDX-License-Identifier: Apache-2.0
/**
 * Bytes ⇄ "binary strings" (one char per byte, codes 0–255). Core has no `TextEncoder`, and
 * bootloader files are bytes, not UTF-8: a grubenv written by another tool must come back out
 * byte for byte, whatever it holds.
 */
import { ErrorCode, MoltError } from '../errors.ts';

/** The bytes as a string with one char (code 0–255) per byte. */
export function bytesToBinary(bytes: Uint8Array): string {
  let text = '';
  for (let i = 0; i < bytes.length; i += 4096) {
    text += String.fromCharCode(...bytes.subarray(i, i + 4096));
  }
  return text;
}

/** The bytes of a binary string; a char above 255 is not a byte and is refused. */
export function binaryToBytes(text: string): Uint8Array {
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (code > 0xff) {
      throw new MoltError(
        ErrorCode.BadInput,
        `character U+${code.toString(16)} at offset ${i} is not a byte`,
        {
          hint: 'bootloader files are written as bytes; encode text as UTF-8 bytes first',
        },
      );
    }
    bytes[i] = code;
  }
  return bytes;
}

/** True when every char of `text` is a byte (code ≤ 255). */
export function isBinary(text: string): boolean {
  // eslint-disable-next-line no-control-regex
  return /^[\u0000-\u00ff]*$/.test(text);
}
