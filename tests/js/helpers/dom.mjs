/**
 * A minimal DOM for node tests of code that only builds nodes: createElement, createTextNode,
 * createDocumentFragment, append, textContent, dataset, className, setAttribute, style.
 * Anything that parses HTML (innerHTML, outerHTML, insertAdjacentHTML) throws, so a test fails
 * loudly if the code under test ever reaches for it. `serialize` prints a tree for assertions.
 */

class FakeNode {
  constructor(doc) {
    this.ownerDocument = doc;
    this.childNodes = [];
    this.parentNode = null;
  }

  append(...nodes) {
    for (const node of nodes) {
      const child = typeof node === "string" ? this.ownerDocument.createTextNode(node) : node;
      if (child instanceof FakeFragment) {
        for (const inner of [...child.childNodes]) this.append(inner);
        child.childNodes = [];
        continue;
      }
      child.parentNode = this;
      this.childNodes.push(child);
    }
  }

  replaceChildren(...nodes) {
    this.childNodes = [];
    this.append(...nodes);
  }

  get textContent() {
    return this.childNodes.map((child) => child.textContent).join("");
  }

  set textContent(value) {
    this.childNodes = [];
    if (value !== "") this.append(this.ownerDocument.createTextNode(String(value)));
  }
}

class FakeText extends FakeNode {
  constructor(doc, data) {
    super(doc);
    this.nodeType = 3;
    this.data = data;
  }

  get textContent() {
    return this.data;
  }
}

class FakeFragment extends FakeNode {}

const forbidden = () => {
  throw new Error("HTML parsing is not allowed");
};

class FakeElement extends FakeNode {
  constructor(doc, tag) {
    super(doc);
    this.nodeType = 1;
    this.tagName = tag.toUpperCase();
    this.attributes = new Map();
    this.dataset = {};
    this.style = {};
    this.className = "";
  }

  setAttribute(name, value) {
    this.attributes.set(name, String(value));
  }

  getAttribute(name) {
    return this.attributes.get(name) ?? null;
  }

  get children() {
    return this.childNodes.filter((child) => child instanceof FakeElement);
  }

  querySelectorAll(tag) {
    const found = [];
    const walk = (node) => {
      for (const child of node.childNodes) {
        if (child instanceof FakeElement) {
          if (child.tagName === tag.toUpperCase()) found.push(child);
          walk(child);
        }
      }
    };
    walk(this);
    return found;
  }

  set innerHTML(_) {
    forbidden();
  }

  get innerHTML() {
    return forbidden();
  }

  set outerHTML(_) {
    forbidden();
  }

  insertAdjacentHTML() {
    forbidden();
  }
}

export function fakeDocument() {
  const doc = {
    created: [],
    createElement(tag) {
      const node = new FakeElement(doc, tag);
      doc.created.push(node.tagName);
      return node;
    },
    createTextNode: (data) => new FakeText(doc, String(data)),
    createDocumentFragment: () => new FakeFragment(doc),
  };
  return doc;
}

/** `<tag class data-…>children</tag>` with text escaped as {text}, for readable assertions. */
export function serialize(node) {
  if (node instanceof FakeText) return node.data;
  const inner = node.childNodes.map(serialize).join("");
  if (!(node instanceof FakeElement)) return inner;
  const tag = node.tagName.toLowerCase();
  const attrs = [];
  if (node.className) attrs.push(`.${node.className.split(" ").join(".")}`);
  for (const [key, value] of Object.entries(node.dataset)) attrs.push(`${key}=${value}`);
  for (const [key, value] of node.attributes) attrs.push(`${key}=${value}`);
  return `<${[tag, ...attrs].join(" ")}>${inner}</${tag}>`;
}

export function wrap(fragment, doc) {
  const root = doc.createElement("div");
  root.append(fragment);
  return root;
}
