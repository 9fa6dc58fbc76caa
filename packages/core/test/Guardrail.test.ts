import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Ref, Result, Schema } from "effect"
import * as Action from "../src/Action.ts"
import type { GuardrailViolation } from "../src/ActionError.ts"
import * as Agent from "../src/Agent.ts"
import type * as Guardrail from "../src/Guardrail.ts"
import * as GuardrailKernel from "../src/internal/pipeline/guardrail.ts"
import * as Role from "../src/Role.ts"

const identity = (name: string) => ({ name, goal: "goal", domain: "domain" })

const violation = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.flip(effect) as unknown as Effect.Effect<GuardrailViolation>

describe("Guardrail", () => {
  describe("input (SPEC §9 step 3)", () => {
    const policy: Guardrail.Input = { maxLength: 10, blockedPatterns: [/DROP\s+TABLE/i, "secret-\\d+"] }

    it.effect("checks every string leaf at any depth; the error names the path, never the value", () =>
      Effect.gen(function* () {
        const nested = { guest: { notes: ["fine", { text: "please drop  table users" }] }, n: 5 }
        const error = yield* violation(
          GuardrailKernel.checkInput("book", { blockedPatterns: policy.blockedPatterns }, nested)
        )
        assert.deepStrictEqual([error.category, error.stage, error.rule], ["GUARDRAIL", "input", "DROP\\s+TABLE"])
        assert.include(error.message, "guest.notes[1].text")
        assert.notInclude(error.message, "users")
        const long = yield* violation(GuardrailKernel.checkInput("book", policy, { a: { b: "x".repeat(11) } }))
        assert.deepStrictEqual(
          [long.rule, long.message],
          ["maxLength", "book: input guardrail: a.b 11 characters, more than the 10 allowed"]
        )
        const stringPattern = yield* violation(
          GuardrailKernel.checkInput("book", policy, { list: ["ok", "secret-42"] })
        )
        assert.strictEqual(stringPattern.rule, "secret-\\d+")
      })
    )

    it.effect("passes arguments that break no rule unchanged (same object); keys and non-strings are not checked", () =>
      Effect.gen(function* () {
        const args = { "DROP TABLE": 1, n: 12345678901234, ok: "short", nested: [true, null] }
        assert.strictEqual(yield* GuardrailKernel.checkInput("a", policy, args), args)
        assert.strictEqual(yield* GuardrailKernel.checkInput("a", undefined, args), args)
      })
    )

    it.effect("sanitize removes every blocked match, then cuts to maxLength, in a copy", () =>
      Effect.gen(function* () {
        const args = { a: "xx secret-1 secret-22 yy", b: ["0123456789abc"], c: 3 }
        const sanitized = yield* GuardrailKernel.checkInput("a", { ...policy, onViolation: "sanitize" }, args)
        assert.deepStrictEqual(sanitized, { a: "xx   yy", b: ["0123456789"], c: 3 })
        assert.deepStrictEqual(args, { a: "xx secret-1 secret-22 yy", b: ["0123456789abc"], c: 3 })
      })
    )

    it.effect("sanitize keeps a key named __proto__ (as JSON.parse makes it) as a key of the copy", () =>
      Effect.gen(function* () {
        const args = JSON.parse('{"__proto__":{"note":"xx secret-1"},"b":"ok"}') as Record<string, unknown>
        const sanitized = yield* GuardrailKernel.checkInput("a", { ...policy, onViolation: "sanitize" }, args)
        assert.strictEqual(Object.getPrototypeOf(sanitized), Object.prototype)
        assert.deepStrictEqual(Object.keys(sanitized), ["__proto__", "b"])
        assert.deepStrictEqual(Object.getOwnPropertyDescriptor(sanitized, "__proto__")?.value, { note: "xx " })
      })
    )

    it.effect("a global RegExp given by the user behaves the same on every call (no lastIndex state)", () =>
      Effect.gen(function* () {
        const global: Guardrail.Input = { blockedPatterns: [/bad/g] }
        for (let i = 0; i < 3; i++) {
          assert.strictEqual((yield* violation(GuardrailKernel.checkInput("a", global, { t: "bad" }))).rule, "bad")
        }
      })
    )
  })

  describe("output (SPEC §9 step 8)", () => {
    it.effect("checks the result's string form: strings as they are, other values as JSON", () =>
      Effect.gen(function* () {
        const policy: Guardrail.Output = { maxCharacters: 12, blockedPatterns: [/\d{4}-\d{4}/] }
        assert.strictEqual(yield* GuardrailKernel.checkOutput("a", policy, "short"), "short")
        assert.deepStrictEqual(yield* GuardrailKernel.checkOutput("a", policy, { ok: 1 }), { ok: 1 })
        const long = yield* violation(GuardrailKernel.checkOutput("a", policy, { text: "1234" }))
        assert.deepStrictEqual([long.stage, long.rule], ["output", "maxCharacters"])
        const card = yield* violation(GuardrailKernel.checkOutput("a", policy, "1234-5678"))
        assert.strictEqual(card.rule, "\\d{4}-\\d{4}")
        assert.deepStrictEqual(GuardrailKernel.stringForm(undefined), Result.succeed(""))
        assert.deepStrictEqual(GuardrailKernel.stringForm(null), Result.succeed("null"))
        assert.deepStrictEqual(GuardrailKernel.stringForm([1, "a"]), Result.succeed('[1,"a"]'))
      })
    )

    it.effect("truncate cuts a long string result; a long structured result is still rejected", () =>
      Effect.gen(function* () {
        const policy: Guardrail.Output = { maxCharacters: 8, onViolation: "truncate", blockedPatterns: [/secret/] }
        assert.strictEqual(yield* GuardrailKernel.checkOutput("a", policy, "abcdefghij"), "abcdefgh")
        assert.strictEqual(yield* GuardrailKernel.checkOutput("a", policy, "abcdefghsecret"), "abcdefgh")
        assert.strictEqual((yield* violation(GuardrailKernel.checkOutput("a", policy, "secret!"))).rule, "secret")
        assert.strictEqual(
          (yield* violation(GuardrailKernel.checkOutput("a", policy, [1, 2, 3, 4, 5]))).rule,
          "maxCharacters"
        )
      })
    )
  })

  describe("in the pipeline", () => {
    const echo = Action.local({
      description: "Echo",
      parameters: { text: Schema.String, meta: Schema.optionalKey(Schema.Struct({ tag: Schema.String })) },
      run: ({ text }) => text
    })

    it.effect("the role's guardrails apply to every action; an action's own replace them (no merge)", () =>
      Effect.gen(function* () {
        const role = Role.make({
          identity: identity("r"),
          guardrails: { input: { blockedPatterns: [/forbidden/] }, output: { maxCharacters: 8 } },
          actions: {
            echo,
            own: echo.pipe(Action.guardrails({ input: { maxLength: 12 } }))
          }
        })
        const agent = yield* Agent.make({ id: "a", roles: [role] })
        const blocked = yield* Effect.flip(agent.executeAction("echo", { text: "ok", meta: { tag: "forbidden" } }))
        assert.deepStrictEqual([blocked._tag, (blocked as GuardrailViolation).stage], ["GuardrailViolation", "input"])
        const long = yield* Effect.flip(agent.executeAction("echo", { text: "123456789" }))
        assert.deepStrictEqual([long._tag, (long as GuardrailViolation).stage], ["GuardrailViolation", "output"])
        assert.strictEqual(yield* agent.executeAction("own", { text: "ok", meta: { tag: "forbidden" } }), "ok")
        assert.strictEqual(yield* agent.executeAction("own", { text: "123456789" }), "123456789", "no output limit")
        const own = yield* Effect.flip(agent.executeAction("own", { text: "x".repeat(13) }))
        assert.deepStrictEqual([own._tag, (own as GuardrailViolation).rule], ["GuardrailViolation", "maxLength"])
      })
    )

    it.effect("the input guardrail runs after the before hook and before conversion; a rejected call never runs", () =>
      Effect.gen(function* () {
        const runs = yield* Ref.make(0)
        const role = Role.make({
          identity: identity("r"),
          hooks: { before: (_action, args) => ({ ...args, text: `${String(args.text)} forbidden` }) },
          guardrails: { input: { blockedPatterns: ["forbidden"] } },
          actions: {
            count: Action.local({
              description: "Count",
              parameters: { text: Schema.Number },
              run: () => Ref.update(runs, (n) => n + 1)
            })
          }
        })
        const agent = yield* Agent.make({ id: "a", roles: [role] })
        // @ts-expect-error raw arguments of another type, on purpose: the guardrail sees them before conversion
        const error = yield* Effect.flip(agent.executeAction("count", { text: "1" }))
        assert.strictEqual(error._tag, "GuardrailViolation", "checked after conversion it would be VALIDATION")
        assert.strictEqual(yield* Ref.get(runs), 0)
      })
    )

    it.effect("sanitized arguments are what the action receives; truncated results are what the caller gets", () =>
      Effect.gen(function* () {
        const role = Role.make({
          identity: identity("r"),
          actions: {
            echo: echo.pipe(
              Action.guardrails({
                input: { blockedPatterns: [/<script>.*?<\/script>/gi], onViolation: "sanitize" },
                output: { maxCharacters: 6, onViolation: "truncate" }
              })
            )
          }
        })
        const agent = yield* Agent.make({ id: "a", roles: [role] })
        assert.strictEqual(yield* agent.executeAction("echo", { text: "hi<SCRIPT>x</script>!" }), "hi!")
        assert.strictEqual(yield* agent.executeAction("echo", { text: "0123456789" }), "012345")
      })
    )

    it.effect("an invalid pattern or limit is a RoleDefinitionError when the agent is made", () =>
      Effect.gen(function* () {
        const role = (guardrails: Guardrail.Policy) =>
          Role.make({ identity: identity("r"), actions: { echo: echo.pipe(Action.guardrails(guardrails)) } })
        const badPattern = yield* Effect.exit(
          Agent.make({ id: "a", roles: [role({ input: { blockedPatterns: ["(unclosed"] } })] })
        )
        const badLimit = yield* Effect.exit(Agent.make({ id: "a", roles: [role({ output: { maxCharacters: -1 } })] }))
        for (const exit of [badPattern, badLimit]) {
          assert.isTrue(Exit.isFailure(exit))
          const error = yield* Effect.flip(exit)
          assert.deepStrictEqual([error._tag, error.role, error.key], ["RoleDefinitionError", "r", "echo"])
        }
      })
    )
  })
})
