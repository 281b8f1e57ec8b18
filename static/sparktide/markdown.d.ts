/** Inline nodes of the safe Markdown subset. Links and images are text, never elements. */
export type Inline =
  | { type: "text"; text: string }
  | { type: "strong" | "em" | "del"; children: Inline[] }
  | { type: "code"; text: string }
  | { type: "break" }
  | { type: "link"; children: Inline[]; url: string }
  | { type: "image"; alt: string; url: string }
  | { type: "citation"; id: string; raw: string }
  | { type: "marker"; kind: "num" | "block"; value: string; raw: string };

export type Block =
  | { type: "paragraph"; children: Inline[] }
  | { type: "heading"; level: number; children: Inline[] }
  | { type: "code_block"; lang: string; text: string }
  | { type: "list"; ordered: boolean; start: number; items: { children: Block[] }[] }
  | {
      type: "table";
      align: ("left" | "center" | "right" | null)[];
      head: Inline[][];
      rows: Inline[][][];
    }
  | { type: "blockquote"; children: Block[] }
  | { type: "hr" };

export interface Root {
  type: "root";
  children: Block[];
}

export interface RenderOptions {
  /** Defaults to globalThis.document. */
  document?: Document;
  /** Builds a chip for a citation marker (by default a span with the marker text). */
  citation?: (node: { id: string; raw: string }) => Node;
  marker?: (node: { kind: string; value: string; raw: string }) => Node;
  labels?: { image?: string };
}

export function parseMarkdown(text: string): Root;
export function parseInline(text: string): Inline[];
/** DOM nodes built with createElement / text nodes only: untrusted text never becomes HTML. */
export function renderMarkdown(tree: Root | string, options?: RenderOptions): DocumentFragment;
export function inlineText(nodes: Inline[]): string;
