/**
 * The decision rule (C55): the first decision recorded stands, the same decision again is that decision, and
 * any other is refused naming the one recorded — a table of every pair of decisions.
 */
import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import * as Decision from "../src/Decision.ts"

describe("Decision", () => {
  const alice = Decision.approve("alice")
  const all: ReadonlyArray<Decision.Decision> = [
    alice,
    Decision.approve("bob"),
    Decision.reject("alice", "too expensive"),
    Decision.reject("alice", "not now"),
    Decision.reject("bob", "too expensive")
  ]

  it("nothing recorded: record", () => {
    for (const next of all) assert.deepStrictEqual(Decision.judge(undefined, next), { _tag: "Record" })
  })

  for (const recorded of all) {
    for (const next of all) {
      const same = recorded === next
      it(`${Decision.describe(recorded)}, then ${Decision.describe(next)}: ${same ? "the same decision" : "refused"}`, () => {
        assert.deepStrictEqual(
          Decision.judge(recorded, { ...next }),
          same
            ? { _tag: "Repeat", recorded }
            : { _tag: "Refuse", recorded, message: `already decided: ${Decision.describe(recorded)}` }
        )
      })
    }
  }

  it("messages say who decided what", () => {
    assert.strictEqual(Decision.describe(alice), "approved by alice")
    assert.strictEqual(Decision.describe(Decision.reject("bob", "too expensive")), "rejected by bob: too expensive")
    assert.strictEqual(Decision.alreadyDecided(alice), "already decided: approved by alice")
  })

  it("the schema decodes the two decisions and nothing else", () => {
    const decode = Schema.decodeUnknownExit(Decision.Decision)
    assert.strictEqual(decode(alice)._tag, "Success")
    assert.strictEqual(decode({ _tag: "Reject", approver: "bob", reason: "no" })._tag, "Success")
    for (const bad of [{ _tag: "Reject", approver: "bob" }, { _tag: "Maybe", approver: "bob" }, "approve", null]) {
      assert.strictEqual(decode(bad)._tag, "Failure", JSON.stringify(bad))
    }
  })
})
