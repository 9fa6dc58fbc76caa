import { assert, describe, it } from "@effect/vitest"
import * as ActionError from "../src/ActionError.ts"

describe("ActionError.actionNotFound", () => {
  it("names the action asked for and lists the names available", () => {
    const error = ActionError.actionNotFound("bok", ["book", "cancel", "search"])
    assert.strictEqual(error._tag, "ActionNotFound")
    assert.strictEqual(error.category, "NOT_FOUND")
    assert.strictEqual(error.retryable, false)
    assert.strictEqual(error.message, 'no action "bok"; available: book, cancel, search')
    assert.deepStrictEqual(error.available, ["book", "cancel", "search"])
  })

  it("caps a long list at 20 names and says how many more, keeping all of them in available", () => {
    const names = Array.from({ length: 25 }, (_, index) => `action${index}`)
    const error = ActionError.actionNotFound("x", names)
    assert.strictEqual(error.message, `no action "x"; available: ${names.slice(0, 20).join(", ")} … and 5 more`)
    assert.deepStrictEqual(error.available, names)
  })

  it("says when no action is available", () => {
    assert.strictEqual(ActionError.actionNotFound("x", []).message, 'no action "x"; no action is available')
  })
})
