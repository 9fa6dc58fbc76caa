/**
 * The audits through the pipeline (public API only): one serialisation of a
 * result for every reader (C31), every cut of text on a code-point boundary
 * (C32), walks over outside data bounded in depth (C42).
 */
import { assert, describe, it } from "@effect/vitest"
import { Action, Agent, Role } from "@rolecraft/core"
import { Effect, Exit, Schema } from "effect"

const agentWith = (actions: Record<string, Action.Any>) =>
  Agent.make({
    id: "audits",
    roles: [Role.make({ identity: { name: "desk", goal: "Answer", domain: "desk" }, actions })]
  })

const failure = (exit: Exit.Exit<unknown, unknown>) => {
  assert.isTrue(Exit.isFailure(exit), String(exit))
  const reason = Exit.isFailure(exit) ? exit.cause.reasons[0] : undefined
  assert.strictEqual(reason?._tag, "Fail", `a typed failure, not a defect: ${String(exit)}`)
  return (reason as { readonly error: { readonly category: string; readonly message: string } }).error
}

/** Whether a text holds half a surrogate pair. */
const loneSurrogate = (text: string) =>
  /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text)

const nested = (depth: number): unknown => {
  let value: unknown = "leaf"
  for (let i = 0; i < depth; i++) value = [value]
  return value
}

describe("one serialisation of a result (C31)", () => {
  it.effect("the output guardrail checks a result holding a bigint as its JSON, so a blocked SSN is caught", () =>
    Effect.gen(function* () {
      const agent = yield* agentWith({
        person: Action.local({
          description: "A person's record",
          parameters: {},
          run: () => ({ ssn: "123-45-6789", id: 1n })
        }).pipe(Action.guardrails({ output: { blockedPatterns: ["\\d{3}-\\d{2}-\\d{4}"] } }))
      })
      const error = failure(yield* Effect.exit(agent.executeAction("person", {})))
      assert.strictEqual(error.category, "GUARDRAIL")
    })
  )

  it.effect(
    "a result that refers to itself is EXECUTION 'cannot be serialised' with the path, never [object Object]",
    () =>
      Effect.gen(function* () {
        const agent = yield* agentWith({
          loop: Action.local({
            description: "A value that contains itself",
            parameters: {},
            run: () => {
              const value: Record<string, unknown> = { name: "loop" }
              value.self = value
              return value
            }
          }).pipe(Action.guardrails({ output: { maxCharacters: 1_000 } }))
        })
        const error = failure(yield* Effect.exit(agent.executeAction("loop", {})))
        assert.strictEqual(error.category, "EXECUTION")
        assert.include(error.message, "cannot be serialised")
        assert.include(error.message, "$.self")
        assert.notInclude(error.message, "[object Object]")
      })
  )
})

describe("cuts of text (C32)", () => {
  it.effect("an output guardrail that truncates never ends in half a surrogate pair", () =>
    Effect.gen(function* () {
      const agent = yield* agentWith({
        forecast: Action.local({ description: "Forecast", parameters: {}, run: () => "Forecast:🌤️ sunny" }).pipe(
          Action.guardrails({ output: { maxCharacters: 10, onViolation: "truncate" } })
        )
      })
      const text = yield* agent.executeAction("forecast", {})
      assert.strictEqual(text, "Forecast:")
      assert.isFalse(loneSurrogate(String(text)))
    })
  )

  it.effect("an input guardrail that sanitises by cutting never leaves half a surrogate pair", () =>
    Effect.gen(function* () {
      const agent = yield* agentWith({
        echo: Action.local({
          description: "Echo",
          parameters: { text: Schema.String },
          run: ({ text }) => text
        }).pipe(Action.guardrails({ input: { maxLength: 10, onViolation: "sanitize" } }))
      })
      const text = yield* agent.executeAction("echo", { text: "Forecast:🌤️ sunny" })
      assert.strictEqual(text, "Forecast:")
    })
  )
})

describe("walks over outside data (C42)", () => {
  it.effect(
    "arguments nested ~4,300 deep are VALIDATION 'nested too deeply' at the input guardrail, not a stack overflow",
    () =>
      Effect.gen(function* () {
        const agent = yield* agentWith({
          store: Action.local({
            description: "Store a value",
            parameters: { value: Schema.Unknown },
            run: () => "stored"
          }).pipe(Action.guardrails({ input: { maxLength: 100 } }))
        })
        const error = failure(yield* Effect.exit(agent.executeAction("store", { value: nested(4_300) })))
        assert.strictEqual(error.category, "VALIDATION")
        assert.include(error.message, "nested too deeply")
        assert.strictEqual(yield* agent.executeAction("store", { value: nested(900) }), "stored")
      })
  )

  it.effect("arguments nested ~4,300 deep to an action that needs approval are VALIDATION, not a stack overflow", () =>
    Effect.gen(function* () {
      const agent = yield* agentWith({
        store: Action.local({
          description: "Store a value",
          parameters: { value: Schema.Unknown },
          run: () => "stored"
        }).pipe(Action.requireApproval({ reason: "Writes" }))
      })
      const error = failure(yield* Effect.exit(agent.executeAction("store", { value: nested(4_300) })))
      assert.strictEqual(error.category, "VALIDATION")
      assert.include(error.message, "nested more than 1000 levels")
    })
  )
})
