import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, test } from "node:test";

import { trustedSources } from "../../static/sparktide/segments.js";

const { cases } = JSON.parse(readFileSync(new URL("../conformance/trusted_sources.json", import.meta.url), "utf-8"));

describe("the SDK's trusted-source rule agrees with citations/trusted.py on every shared case", () => {
  for (const c of cases) {
    test(c.name, () => {
      const trusted = trustedSources(c.rootAgentCallId, c.citationChecks, c.citations);
      assert.equal(trusted.checked, c.checked);
      assert.deepEqual(trusted.verified.map((s) => s.id), c.verified);
      assert.deepEqual(trusted.unverified.map((s) => s.id), c.unverified);
      for (const source of trusted.verified) assert.deepEqual(source.citation, c.citations[source.id]);
    });
  }
});
