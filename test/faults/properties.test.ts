/**
 * Property tests over the audits: whatever a provider answers, a model call
 * ends in a reply or a typed failure; every cut of text ends on a code-point
 * boundary; any value has one string form or a typed refusal; arguments of
 * any depth get an answer, never a stack overflow. A few hundred runs each
 * here; `node scripts/fault-properties.ts` runs 10,000 (FAULTS_RUNS).
 */
import { assert, describe, it } from "@effect/vitest"
import { Action, ActionResult, Agent, LanguageModel, type ModelResponse, Role } from "@rolecraft/core"
import { Effect, Exit, Schema } from "effect"
import * as fc from "fast-check"

const numRuns = Number(process.env.FAULTS_RUNS ?? 200)

const isTypedOrSuccess = (exit: Exit.Exit<unknown, unknown>) =>
  Exit.isSuccess(exit) || (Exit.isFailure(exit) && exit.cause.reasons.every((reason) => reason._tag === "Fail"))

const loneSurrogate = (text: string) =>
  /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text)

/** Odd values for a field of a model's reply: absent, null, empty, of another type. */
const odd = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.constant(""),
  fc.string(),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant([]),
  fc.constant({}),
  fc.array(fc.anything(), { maxLength: 3 })
)

const toolCall = fc.oneof(
  odd,
  fc.record({ id: odd, name: odd, arguments: fc.oneof(odd, fc.json()) }, { requiredKeys: [] })
)

const reply = fc.oneof(
  fc.anything(),
  fc.record(
    {
      text: odd,
      toolCalls: fc.oneof(odd, fc.array(toolCall, { maxLength: 4 })),
      usage: fc.oneof(odd, fc.record({ inputTokens: odd, outputTokens: odd, totalTokens: odd }, { requiredKeys: [] })),
      finishReason: odd,
      model: odd,
      refusal: odd
    },
    { requiredKeys: [] }
  )
)

describe("properties over the audits", () => {
  it("whatever a provider answers, a model call ends in a reply or a typed failure, never a defect", async () => {
    await fc.assert(
      fc.asyncProperty(reply, async (answer) => {
        const model = LanguageModel.make(() => answer as ModelResponse.ProviderResponse)
        const exit = await Effect.runPromise(Effect.exit(model.generate({ messages: [] })))
        assert.isTrue(isTypedOrSuccess(exit), String(exit))
        if (Exit.isSuccess(exit)) {
          assert.strictEqual(typeof exit.value.text, "string")
          for (const call of exit.value.toolCalls) {
            assert.deepStrictEqual(
              [typeof call.id, typeof call.name, typeof call.arguments],
              ["string", "string", "string"]
            )
          }
        }
      }),
      { numRuns }
    )
  })

  it("an output guardrail that truncates never leaves half a surrogate pair, and keeps at most the limit", async () => {
    const agentOf = (limit: number) =>
      Agent.make({
        id: "cut",
        roles: [
          Role.make({
            identity: { name: "desk", goal: "Echo", domain: "desk" },
            actions: {
              echo: Action.local({
                description: "Echo",
                parameters: { text: Schema.String },
                run: ({ text }) => text
              }).pipe(Action.guardrails({ output: { maxCharacters: limit, onViolation: "truncate" } }))
            }
          })
        ]
      })
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: "binary", maxLength: 40 }), fc.nat({ max: 40 }), async (text, limit) => {
        const out = await Effect.runPromise(
          Effect.scoped(Effect.flatMap(agentOf(limit), (agent) => agent.executeAction("echo", { text })))
        )
        assert.isFalse(loneSurrogate(String(out)), JSON.stringify(out))
        assert.isAtMost(String(out).length, limit)
        assert.isTrue(text.startsWith(String(out)))
      }),
      { numRuns }
    )
  })

  it("any value has one string form or a typed refusal; '[object Object]' never comes out of an object", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.anything({ withBigInt: true, withMap: true, withSet: true, withDate: true, withTypedArray: false }),
        async (value) => {
          const exit = await Effect.runPromise(Effect.exit(ActionResult.make(value, { action: "any" }).asString))
          assert.isTrue(isTypedOrSuccess(exit))
          if (Exit.isSuccess(exit) && typeof value === "object" && value !== null) {
            assert.notInclude(exit.value, "[object Object]")
          }
        }
      ),
      { numRuns }
    )
  })

  it("arguments of any depth get an answer from a guarded action, never a stack overflow", async () => {
    const agent = await Effect.runPromise(
      Agent.make({
        id: "deep",
        roles: [
          Role.make({
            identity: { name: "desk", goal: "Store", domain: "desk" },
            actions: {
              store: Action.local({
                description: "Store",
                parameters: { value: Schema.Unknown },
                run: () => "ok"
              }).pipe(
                Action.guardrails({ input: { maxLength: 50, onViolation: "sanitize" } }),
                Action.requireApproval({ reason: "Writes" })
              )
            }
          })
        ]
      }).pipe(Effect.scoped)
    )
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: 6_000 }), fc.boolean(), async (depth, objects) => {
        let value: unknown = "leaf"
        for (let i = 0; i < depth; i++) value = objects ? { v: value } : [value]
        const exit = await Effect.runPromise(Effect.exit(agent.executeAction("store", { value })))
        assert.isTrue(isTypedOrSuccess(exit), `depth ${depth}: ${String(exit).slice(0, 200)}`)
      }),
      { numRuns: Math.min(numRuns, 100) }
    )
  })
})
