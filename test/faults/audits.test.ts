/**
 * The audits through the pipeline (public API only): one serialisation of a
 * result for every reader (C31), every cut of text on a code-point boundary
 * (C32), walks over outside data bounded in depth (C42).
 */
import { assert, describe, it } from "@effect/vitest"
import { Action, Agent, type Prompt, Role } from "@rolecraft/core"
import { ScriptedModel } from "@rolecraft/testing"
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

/** A chat turn that calls `tool` once and then answers "done"; the tool message the model got. */
const toolMessageOf = (actions: Record<string, Action.Any>, tool: string) =>
  Effect.gen(function* () {
    const scripted = yield* ScriptedModel.make([
      ScriptedModel.toolCalls([{ id: "c1", name: tool }]),
      ScriptedModel.reply("done")
    ])
    const agent = yield* agentWith(actions)
    const result = yield* Effect.provide(agent.chat("go"), scripted.layer)
    assert.strictEqual(result._tag, "Completed")
    const second = (yield* scripted.requests)[1]
    const message = second?.messages.find((m): m is Prompt.ToolMessage => m.role === "tool" && m.toolCallId === "c1")
    return message?.content ?? ""
  })

describe("the model's copy of a tool result (C31, C34)", () => {
  it.effect(
    "a bigint result reaches the model as its JSON, never [object Object]; a cycle as EXECUTION with its path",
    () =>
      Effect.gen(function* () {
        const big = yield* toolMessageOf(
          { record: Action.local({ description: "A record", parameters: {}, run: () => ({ id: 9007199254740993n }) }) },
          "record"
        )
        assert.strictEqual(big, '{"id":"9007199254740993"}')
        const loop = yield* toolMessageOf(
          {
            loop: Action.local({
              description: "A loop",
              parameters: {},
              run: () => {
                const value: Record<string, unknown> = {}
                value.self = value
                return value
              }
            })
          },
          "loop"
        )
        const error = JSON.parse(loop).error
        assert.strictEqual(error.category, "EXECUTION")
        assert.include(error.message, "cannot be serialised")
        assert.include(error.message, "$.self")
      })
  )

  it.effect("a 5 MB result is capped at 64,000 characters for the model, head and tail kept around a marker", () =>
    Effect.gen(function* () {
      const huge = `BEGIN${"x".repeat(5 * 1024 * 1024)}🌤️END`
      const content = yield* toolMessageOf(
        { dump: Action.local({ description: "A dump", parameters: {}, run: () => huge }) },
        "dump"
      )
      assert.isAtMost(content.length, 64_000)
      assert.isTrue(content.startsWith("BEGIN"))
      assert.isTrue(content.endsWith("🌤️END"))
      assert.match(content, /\[… \d+ characters left out …\]/)
      const omitted = Number(/\[… (\d+) characters left out …\]/.exec(content)?.[1])
      assert.strictEqual(content.length - `\n[… ${omitted} characters left out …]\n`.length + omitted, huge.length)
      assert.isFalse(loneSurrogate(content))
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
