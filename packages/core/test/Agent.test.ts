import { assert, describe, it } from "@effect/vitest"
import { expectTypeOf } from "vitest"
import { Context, Effect, Exit, Fiber, Layer, Ref, Schema } from "effect"
import { TestClock } from "effect/testing"
import * as Action from "../src/Action.ts"
import { ExecutionFailure, RoleDefinitionError, TransientFailure, ValidationError } from "../src/ActionError.ts"
import * as Agent from "../src/Agent.ts"
import type { ActionResponse } from "../src/ActionResponse.ts"
import * as Capability from "../src/Capability.ts"
import type * as LanguageModel from "../src/LanguageModel.ts"
import * as Role from "../src/Role.ts"

const identity = (name: string) => ({ name, goal: "goal", domain: "domain" })

const nights = Action.local({
  description: "Count the nights between two dates",
  parameters: { checkIn: Schema.String, checkOut: Schema.String },
  run: ({ checkIn, checkOut }) => Math.round((Date.parse(checkOut) - Date.parse(checkIn)) / 86_400_000)
})

const travel = Role.make({ identity: identity("travel"), actions: { nights } })

describe("Agent", () => {
  it.effect("runs a local action with converted arguments", () =>
    Effect.gen(function* () {
      const agent = yield* Agent.make({ id: "planner", roles: [travel] })
      const result: number = yield* agent.executeAction("nights", { checkIn: "2026-11-02", checkOut: "2026-11-05" })
      assert.strictEqual(result, 3)
    })
  )

  it.effect("an unknown action is NOT_FOUND with the names available; denied by authority it is AUTHORITY", () =>
    Effect.gen(function* () {
      const open = yield* Agent.make({ id: "a", roles: [travel] })
      // @ts-expect-error an unknown name does not compile; the run-time refusal is what this pins
      const missing = yield* Effect.flip(open.executeAction("book", {}))
      assert.strictEqual(missing._tag, "ActionNotFound")
      assert.deepStrictEqual(missing._tag === "ActionNotFound" && missing.available, ["nights"])
      assert.strictEqual(missing.message, 'no action "book"; available: nights')
      const restricted = yield* Agent.make({ id: "b", roles: [travel], authority: { allow: ["nights"] } })
      // @ts-expect-error an unknown name (as above)
      const denied = yield* Effect.flip(restricted.executeAction("book", {}))
      assert.strictEqual(denied._tag, "Unauthorized")
      const allowedButMissing = yield* Agent.make({ id: "c", roles: [travel], authority: { allow: ["*"] } })
      // @ts-expect-error an unknown name (as above)
      assert.strictEqual((yield* Effect.flip(allowedButMissing.executeAction("book", {})))._tag, "ActionNotFound")
    })
  )

  it.effect(
    "agent.tools lists the actions authority allows and the model may see, with their schemas and approvals",
    () =>
      Effect.gen(function* () {
        const desk = Role.make({
          identity: identity("desk"),
          actions: {
            nights,
            "rates.v2/eu": Action.local({ description: "Rates", parameters: {}, run: () => "rates" }),
            book: Action.local({
              description: "Book a hotel",
              parameters: { hotelId: Schema.String },
              run: () => "booked"
            }).pipe(Action.requireApproval({ reason: "spends money" })),
            audit: Action.local({ description: "Audit", parameters: {}, run: () => "ok" }).pipe(
              Action.excludeFromModel
            ),
            refund: Action.local({ description: "Refund", parameters: {}, run: () => "refunded" })
          }
        })
        const agent = yield* Agent.make({ id: "desk", roles: [desk], authority: { deny: ["refund"] } })
        assert.deepStrictEqual(
          agent.tools.map(({ name, action, approval }) => ({ name, action, approval })),
          [
            { name: "nights", action: "nights", approval: undefined },
            { name: "rates_v2_eu", action: "rates.v2/eu", approval: undefined },
            { name: "book", action: "book", approval: { reason: "spends money" } }
          ]
        )
        const book = agent.tools.find((tool) => tool.action === "book")
        assert.deepStrictEqual(book?.parameters, {
          type: "object",
          properties: { hotelId: { type: "string" } },
          required: ["hotelId"]
        })
        assert.strictEqual(book?.description, "Book a hotel")
        assert.isFalse(agent.allows("refund"))
        assert.isTrue(agent.allows("book"))
        const none = yield* Agent.make({ id: "none", roles: [desk], authority: { allow: ["nothing"] } })
        assert.deepStrictEqual(none.tools, [])
        assert.isFalse(none.allows("nights"))
        assert.isTrue(none.allows("nothing"))
      })
  )

  it.effect("deny wins over allow, and globs match action names", () =>
    Effect.gen(function* () {
      const agent = yield* Agent.make({ id: "a", roles: [travel], authority: { allow: ["*"], deny: ["nig*"] } })
      const error = yield* Effect.flip(agent.executeAction("nights", { checkIn: "2026-11-02", checkOut: "2026-11-05" }))
      assert.strictEqual(error._tag, "Unauthorized")
    })
  )

  it.effect("missing, extra and unconvertible arguments", () =>
    Effect.gen(function* () {
      const agent = yield* Agent.make({ id: "a", roles: [travel] })
      // @ts-expect-error a missing argument does not compile; the run-time check is what this pins
      const missing = yield* Effect.flip(agent.executeAction("nights", { checkIn: "2026-11-02" }))
      assert.strictEqual(missing._tag, "ValidationError")
      assert.deepStrictEqual(missing._tag === "ValidationError" && missing.issues.map((i) => i.path), ["checkOut"])
      // @ts-expect-error an extra argument does not compile (an object literal); at run time it is ignored
      const extra = yield* agent.executeAction("nights", { checkIn: "2026-11-02", checkOut: "2026-11-04", foo: 1 })
      assert.strictEqual(extra, 2)
      // @ts-expect-error arguments of the wrong type do not compile; the run-time check is what this pins
      const bad = yield* Effect.flip(agent.executeAction("nights", { checkIn: 5, checkOut: { a: 1 } }))
      assert.deepStrictEqual(bad._tag === "ValidationError" && bad.issues.map((i) => i.path).sort(), [
        "checkIn",
        "checkOut"
      ])
    })
  )

  it.effect("a body that throws, rejects or dies is EXECUTION; an ActionError passes through", () =>
    Effect.gen(function* () {
      const boom = (run: () => unknown) => Action.local({ description: "boom", parameters: {}, run })
      const role = Role.make({
        identity: identity("faults"),
        actions: {
          throws: boom(() => {
            throw new Error("thrown")
          }),
          rejects: boom(() => Promise.reject(new Error("rejected"))),
          dies: boom(() => Effect.die(new Error("died"))),
          fails: boom(() => Effect.fail("plain failure")),
          typed: boom(() => Effect.fail(new TransientFailure({ action: "typed", message: "try later", status: 503 })))
        }
      })
      const agent = yield* Agent.make({ id: "a", roles: [role] })
      for (const [name, message] of [
        ["throws", "thrown"],
        ["rejects", "rejected"],
        ["dies", "died"],
        ["fails", "plain failure"]
      ] as const) {
        const error = yield* Effect.flip(agent.executeAction(name))
        assert.instanceOf(error, ExecutionFailure)
        assert.include(error.message, message)
      }
      const typed = yield* Effect.flip(agent.executeAction("typed"))
      assert.instanceOf(typed, TransientFailure)
      assert.strictEqual(typed._tag === "TransientFailure" && typed.status, 503)
    })
  )

  it.effect("a body that throws or dies keeps its stack as the cause; the EXECUTION failure itself has none", () =>
    Effect.gen(function* () {
      const boom = (run: () => unknown) => Action.local({ description: "boom", parameters: {}, run })
      const role = Role.make({
        identity: identity("defects"),
        actions: {
          throws: boom(function throwingBody() {
            throw new Error("thrown")
          }),
          dies: boom(function dyingBody() {
            return Effect.die(new Error("died"))
          })
        }
      })
      const agent = yield* Agent.make({ id: "a", roles: [role] })
      for (const [name, frame] of [
        ["throws", "throwingBody"],
        ["dies", "dyingBody"]
      ] as const) {
        const response = yield* agent.execute({ action: name, params: {} })
        const error = response.error
        if (!(error instanceof ExecutionFailure)) return assert.fail(`${name}: expected an ExecutionFailure`)
        assert.strictEqual(error.stack, `ExecutionFailure: ${error.message}`)
        assert.instanceOf(error.cause, Error)
        assert.match((error.cause as Error).stack ?? "", new RegExp(`\\n\\s+at (Object\\.)?${frame} `))
      }
    })
  )

  it.effect("execute reports failures in the ActionResponse", () =>
    Effect.gen(function* () {
      const agent = yield* Agent.make({ id: "a", roles: [travel] })
      const ok = yield* agent.execute({ action: "nights", params: { checkIn: "2026-11-02", checkOut: "2026-11-05" } })
      assert.deepStrictEqual([ok.success, ok.value, ok.error], [true, 3, undefined])
      const failed = yield* agent.execute({ action: "nights", params: { checkIn: "2026-11-02" }, correlationId: "c-1" })
      assert.strictEqual(failed.success, false)
      assert.strictEqual(failed.error?._tag, "ValidationError")
      assert.strictEqual(failed.correlationId, "c-1")
      assert.isAtLeast(failed.durationMs, 0)
    })
  )

  it.effect("bare action names must be unique across roles", () =>
    Effect.gen(function* () {
      const other = Role.make({ identity: identity("other"), actions: { nights } })
      const error = yield* Effect.flip(Agent.make({ id: "a", roles: [travel, other] }))
      assert.instanceOf(error, RoleDefinitionError)
      assert.match(error.message, /travel and role other/)
    })
  )

  it.effect(
    "an llm action with no LanguageModel (its requirement cast away) fails with VALIDATION naming it, so a fallback runs",
    () =>
      Effect.gen(function* () {
        const summarize = Action.llm({ description: "Summarise", parameters: { text: Schema.String } })
        const role = Role.make({
          identity: identity("assistant"),
          capabilities: [Capability.make("Summarizer", { summarize })],
          actions: { safe: summarize.pipe(Action.fallback(({ text }: { readonly text: string }) => text.slice(0, 3))) }
        })
        const agent = yield* Agent.make({ id: "a", roles: [role] })
        // The types ask for a LanguageModel: only a program that casts it away gets here.
        const untyped = <A, E>(effect: Effect.Effect<A, E, LanguageModel.LanguageModel>) =>
          effect as Effect.Effect<A, E>
        const error = yield* Effect.flip(untyped(agent.executeAction("summarize", { text: "hello" })))
        assert.instanceOf(error, ValidationError)
        assert.match(error.message, /^summarize: LanguageModel not provided/)
        assert.strictEqual(yield* untyped(agent.executeAction("safe", { text: "hello" })), "hel")
      })
  )

  it.effect("local actions' own requirements are carried through the types", () =>
    Effect.gen(function* () {
      class Rates extends Context.Service<Rates, { readonly eurToUsd: number }>()("test/Rates") {}
      const convert = Action.local({
        description: "EUR to USD",
        parameters: { amount: Schema.Number },
        run: ({ amount }) => Rates.useSync((rates) => amount * rates.eurToUsd)
      })
      const agent = yield* Agent.make({
        id: "a",
        roles: [Role.make({ identity: identity("fx"), actions: { convert } })]
      })
      const call: Effect.Effect<number, unknown, Rates> = agent.executeAction("convert", { amount: 10 })
      const usd = yield* Effect.provide(call, Layer.succeed(Rates, { eurToUsd: 1.5 }))
      assert.strictEqual(usd, 15)
    })
  )

  it.effect("an agent with no role (roles: [], as with mcpServers only) needs no service, so runMain takes it", () =>
    Effect.gen(function* () {
      const agent = yield* Agent.make({ id: "servers-only", roles: [] })
      // Before, an empty roles tuple gave Agent<unknown, unknown>: every call needed `unknown`, and
      // NodeRuntime.runMain (which takes an Effect needing `never`) refused the program.
      expectTypeOf(agent).toEqualTypeOf<Agent.Agent<{}, never>>()
      // A name known only at run time goes through `execute`, which needs nothing either.
      const call: Effect.Effect<ActionResponse, unknown, never> = agent.execute({ action: "anything", params: {} })
      const response = yield* call
      assert.strictEqual(response.success ? "success" : response.error._tag, "ActionNotFound")
    })
  )

  it.effect("role state is a per-agent Ref reachable from local actions", () =>
    Effect.gen(function* () {
      const counter = Role.make({
        identity: identity("counter"),
        state: { initial: { count: 0 } },
        actions: {
          increment: Action.local({
            description: "Increment",
            parameters: {},
            run: (_, context: Action.Context<{ readonly count: number }>) =>
              Ref.updateAndGet(context.state, (s) => ({ count: s.count + 1 }))
          })
        }
      })
      const first = yield* Agent.make({ id: "one", roles: [counter] })
      const second = yield* Agent.make({ id: "two", roles: [counter] })
      yield* first.executeAction("increment")
      assert.deepStrictEqual(yield* first.executeAction("increment"), { count: 2 })
      assert.deepStrictEqual(yield* second.executeAction("increment"), { count: 1 })
    })
  )

  it.effect("interrupting a call mid-retry leaves nothing running and gives no category", () =>
    Effect.gen(function* () {
      const attempts = yield* Ref.make(0)
      const flaky = Action.local({
        description: "always transient",
        parameters: {},
        run: () =>
          Effect.gen(function* () {
            yield* Ref.update(attempts, (n) => n + 1)
            return yield* new TransientFailure({ action: "flaky", message: "busy" })
          })
      }).pipe(Action.resilience({ retry: { maxAttempts: 5, jitter: false } }))
      const agent = yield* Agent.make({ id: "a", roles: [Role.make({ identity: identity("r"), actions: { flaky } })] })
      const fiber = yield* Effect.forkChild(agent.executeAction("flaky"))
      yield* TestClock.adjust("1500 millis")
      assert.strictEqual(yield* Ref.get(attempts), 2)
      yield* Fiber.interrupt(fiber)
      const exit = yield* Effect.exit(Fiber.join(fiber))
      assert.isTrue(Exit.isFailure(exit) && Exit.hasInterrupts(exit))
      yield* TestClock.adjust("1 minute")
      assert.strictEqual(yield* Ref.get(attempts), 2)
    })
  )
})

describe("Agent registration", () => {
  interface Tree {
    readonly label: string
    readonly children: ReadonlyArray<Tree>
  }
  const Tree: Schema.Codec<Tree> = Schema.Struct({
    label: Schema.String,
    children: Schema.Array(Schema.suspend(() => Tree))
  })

  it.effect(
    "an action whose parameters cannot be offered to a model fails at registration, naming role, key and path",
    () =>
      Effect.gen(function* () {
        const walk = Action.local({
          description: "Walk a tree",
          parameters: { tree: Tree },
          run: ({ tree }) => tree.label
        })
        const role = Role.make({ identity: identity("trees"), actions: { walk } })
        const error = yield* Effect.flip(Agent.make({ id: "a", roles: [role] }))
        assert.instanceOf(error, RoleDefinitionError)
        assert.strictEqual(error.key, "walk")
        assert.match(error.message, /Role trees: the parameters of action walk cannot be offered to a model/)
        assert.match(error.message, /properties\.tree/)
        const hidden = Role.make({ identity: identity("trees"), actions: { walk: walk.pipe(Action.excludeFromModel) } })
        const agent = yield* Agent.make({ id: "a", roles: [hidden] })
        assert.strictEqual(yield* agent.executeAction("walk", { tree: { label: "root", children: [] } }), "root")
      })
  )
})

describe("Agent registration of policy numbers", () => {
  const role = (action: Action.Any) => Role.make({ identity: identity("r"), actions: { act: action } })
  const local = Action.local({ description: "d", parameters: {}, run: () => 1 })
  const web = (timeout: number | string) =>
    Action.webService({ description: "d", parameters: {}, endpoint: "http://127.0.0.1:1/x", timeout: timeout as never })

  it.effect.each([
    [local.pipe(Action.resilience({ timeout: "soon" as never })), /timeout must be a finite duration, got soon/],
    [local.pipe(Action.resilience({ attemptTimeout: -5 })), /attemptTimeout must be positive, got -5/],
    [local.pipe(Action.resilience({ retry: { maxAttempts: 1.5 } })), /retry.maxAttempts must be an integer >= 0/],
    [local.pipe(Action.resilience({ retry: { maxAttempts: 2, factor: 0.5 } })), /retry.factor must be a number >= 1/],
    [
      local.pipe(Action.resilience({ retry: { maxAttempts: 2, initialDelay: -1 } })),
      /retry.initialDelay must be zero or positive/
    ],
    [web(0), /timeout must be positive, got 0/],
    [
      local.pipe(Action.requireApproval({ reason: "r", ttl: "later" as never })),
      /requireApproval ttl must be a finite duration/
    ]
  ] as const)("an out-of-range duration or count fails Agent.make naming the action: %s", ([action, message]) =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(Agent.make({ id: "a", roles: [role(action)] }))
      assert.instanceOf(error, RoleDefinitionError)
      assert.strictEqual(error.key, "act")
      assert.match(error.message, message)
    })
  )

  it.effect("a zero initial delay and a plain number of milliseconds are accepted", () =>
    Effect.gen(function* () {
      const action = local.pipe(Action.resilience({ timeout: 5_000, retry: { maxAttempts: 1, initialDelay: 0 } }))
      const agent = yield* Agent.make({ id: "a", roles: [role(action)] })
      assert.strictEqual(yield* agent.executeAction("act"), 1)
    })
  )
})
