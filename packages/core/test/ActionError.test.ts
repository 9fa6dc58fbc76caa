import { assert, describe, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as ActionError from "../src/ActionError.ts"
import * as ApprovalStore from "../src/ApprovalStore.ts"
import * as KnowledgeBase from "../src/KnowledgeBase.ts"
import * as McpClient from "../src/McpClient.ts"
import * as StoreBoundary from "../src/StoreBoundary.ts"

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

describe("action errors hold plain data", () => {
  const fields = { action: "book", message: "book: the upstream refused" }
  const made: ReadonlyArray<Error & { readonly _tag: string }> = [
    ActionError.actionNotFound("book", ["search"]),
    new ActionError.ValidationError({ ...fields, issues: [{ path: "nights", message: "expected an integer" }] }),
    new ActionError.Unauthorized(fields),
    new ActionError.ApprovalRequired({ ...fields, reason: "charges the card", check: "missing" }),
    new ActionError.GuardrailViolation({ ...fields, stage: "input", rule: "maxLength" }),
    new ActionError.ContractViolation({ ...fields, stage: "pre", rule: "nights > 0" }),
    new ActionError.Timeout({ ...fields, after: Duration.seconds(30) }),
    new ActionError.TransientFailure({ ...fields, status: 503 }),
    new ActionError.ExecutionFailure({ ...fields, status: 404, excerpt: "no such room" }),
    new ActionError.RetrievalFailure({ ...fields, source: "faq.md" }),
    // The services' typed failures, which become the cause of an action error.
    new McpClient.McpClientError({ reason: "Rpc", message: "MCP error -32603: broke", sent: true }),
    new StoreBoundary.StoreError({
      store: "the approval store",
      category: "TRANSIENT",
      message: "the approval store is locked"
    }),
    new ApprovalStore.ApprovalTokenError({ check: "used", message: "the approval token has already been used" }),
    new KnowledgeBase.SourceError({ source: "faq.md", message: "cannot read faq.md" })
  ]

  for (const error of made) {
    it(`${error._tag} carries no stack frames: its stack is its tag and message`, () => {
      assert.strictEqual(error.stack, `${error._tag}: ${error.message}`)
      assert.instanceOf(error, Error)
      assert.strictEqual(error.name, error._tag)
    })
  }

  it("keeps every field and a cause's own stack", () => {
    const thrown = new Error("connection reset")
    const error = new ActionError.TransientFailure({
      ...fields,
      status: 503,
      retryAfter: Duration.seconds(2),
      outcomeUnknown: true,
      retryable: false,
      cause: thrown
    })
    assert.deepStrictEqual(
      { ...error },
      {
        _tag: "TransientFailure",
        action: "book",
        category: "TRANSIENT",
        retryable: false,
        status: 503,
        retryAfter: Duration.seconds(2),
        outcomeUnknown: true
      }
    )
    assert.strictEqual(error.message, "book: the upstream refused")
    assert.strictEqual(error.cause, thrown)
    assert.match(thrown.stack ?? "", /\n\s+at /)
  })

  it("reads the stacks of its cause, the cause's causes and an AggregateError's errors once, so only their text is kept", () => {
    // V8 formats a stack (calling Error.prepareStackTrace) when it is first read; until then it keeps the frames.
    const formatted: Array<string> = []
    const original = Error.prepareStackTrace
    try {
      Error.prepareStackTrace = (error, frames) => {
        formatted.push(error.message)
        return `${error.message}\n${frames.map((frame) => `    at ${String(frame)}`).join("\n")}`
      }
      const root = new Error("socket closed")
      const wrapped = new Error("fetch failed", { cause: root })
      const fallback = new Error("fallback threw")
      new ActionError.TransientFailure({ ...fields, cause: wrapped })
      assert.deepStrictEqual(formatted, ["fetch failed", "socket closed"])
      new ActionError.ExecutionFailure({ ...fields, cause: new AggregateError([wrapped, fallback], "both failed") })
      assert.deepStrictEqual(formatted, ["fetch failed", "socket closed", "both failed", "fallback threw"])
      assert.match(fallback.stack ?? "", /^fallback threw\n\s+at /)
    } finally {
      Error.prepareStackTrace = original
    }
  })

  it("keeps the stack of a definition error, which points at the code that defined it", () => {
    const error = new ActionError.RoleDefinitionError({ message: "Role travel has no actions" })
    assert.match(error.stack ?? "", /^RoleDefinitionError: Role travel has no actions\n\s+at /)
  })

  it("leaves the stack limit as it found it, also when the fields are refused", () => {
    const limit = Error.stackTraceLimit
    new ActionError.Unauthorized(fields)
    assert.throws(() => new ActionError.Unauthorized({ action: "book" } as never))
    assert.strictEqual(Error.stackTraceLimit, limit)
  })
})
