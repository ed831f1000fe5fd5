// SPDX-License-Identifier: Apache-2.0
/**
 * Building the page's DOM. Everything from the API goes in as text (`append` of a string makes a
 * text node): nothing the operator answers is ever parsed as HTML (docs/adr/0007 §2).
 */

/** Attributes of an element; undefined ones are left out. */
export type Attributes = Readonly<Record<string, string | number | undefined>>;

/** A child: an element, or text. */
export type Child = Node | string;

function build<E extends Element>(
  node: E,
  attributes: Attributes,
  children: readonly (Child | readonly Child[])[],
): E {
  for (const [name, value] of Object.entries(attributes)) {
    if (value !== undefined) node.setAttribute(name, String(value));
  }
  for (const child of children.flat()) node.append(child);
  return node;
}

/** An HTML element with attributes and children. */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Attributes = {},
  ...children: readonly (Child | readonly Child[])[]
): HTMLElementTagNameMap[K] {
  return build(document.createElement(tag), attributes, children);
}

/** An SVG element with attributes and children. */
export function svg<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attributes: Attributes = {},
  ...children: readonly Child[]
): SVGElementTagNameMap[K] {
  return build(document.createElementNS('http://www.w3.org/2000/svg', tag), attributes, children);
}

/** The page's element for `selector` (index.html has each one the script looks for). */
export function find(selector: string): HTMLElement {
  const found = document.querySelector<HTMLElement>(selector);
  if (found === null) throw new Error(`the page has no ${selector}`);
  return found;
}

/** Set a status pill's text and look (`ok`, `bad`, or neither). */
export function setPill(pill: HTMLElement, text: string, look: 'ok' | 'bad' | ''): void {
  pill.textContent = text;
  pill.className = `pill ${look}`;
}
