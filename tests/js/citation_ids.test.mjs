import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { isCitationId } from "../../static/sparktide/index.js";

// The server's grammar (foundation/ids.py) case by case, from the file every client's check reads.
const cases = JSON.parse(readFileSync(new URL("../conformance/citation_ids.json", import.meta.url), "utf8"));

for (const { id, why } of cases.valid) {
  test(`the browser SDK accepts a well-formed ID: ${why}`, () => assert.equal(isCitationId(id), true));
}
for (const { id, why } of cases.invalid) {
  test(`the browser SDK refuses: ${why}`, () => assert.equal(isCitationId(id), false));
}
