import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";

import { ChatSession } from "../../static/sparktide/session.js";
import { makeSessionClient } from "./helpers/fakes.mjs";

const { cases } = JSON.parse(readFileSync(new URL("../conformance/display_precedence.json", import.meta.url), "utf-8"));

/** Feed one case's events through ChatSession's event folding and read what it displays. */
async function fold(events) {
  const client = makeSessionClient();
  const session = new ChatSession(client);
  await session.start({ agent: "researcher", input: "营收?" });
  const stream = client.streams.at(-1);
  events.forEach((event, index) => stream.push(index + 1, event.type, event.data));
  return session.getSnapshot();
}

describe("ChatSession shows the hand-written display of every display-precedence case", () => {
  for (const c of cases) {
    test(c.name, async () => {
      const snapshot = await fold(c.events);
      const conflict = snapshot.error?.code === "PROTOCOL_CONFLICT";
      assert.equal(conflict, c.expect.conflict, "protocol conflict");
      if (conflict) assert.equal(snapshot.status, "error");
      const withBody = snapshot.blocks.filter((block) => block.content !== null);
      if (c.expect.display !== "shown") {
        assert.deepEqual(withBody, [], "no body is shown");
        for (const block of snapshot.blocks) assert.equal(block.state, "protected");
        if (c.expect.display === "none") assert.deepEqual(snapshot.blocks, []);
        return;
      }
      assert.equal(snapshot.blocks.length, 1, "one block");
      const [block] = snapshot.blocks;
      assert.equal(block.state, "visible");
      assert.equal(block.revision, c.expect.revision);
      assert.deepEqual(block.content, c.expect.content);
      assert.equal(block.sourceHint, c.expect.sourceHint);
      assert.equal(block.preview, c.expect.temporary, "temporary (a preview) or durable (a receipt)");
    });
  }
});

test("the cases cover every display, a temporary preview and a conflict", () => {
  assert.deepEqual(new Set(cases.map((c) => c.expect.display)), new Set(["shown", "withheld", "none"]));
  assert.ok(cases.some((c) => c.expect.temporary), "a temporary preview");
  assert.ok(cases.some((c) => c.expect.conflict), "a protocol conflict");
  assert.equal(new Set(cases.map((c) => c.name)).size, cases.length, "names are unique");
});
