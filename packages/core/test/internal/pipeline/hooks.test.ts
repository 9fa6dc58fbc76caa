import { assert, describe, it } from "@effect/vitest"
import { Effect, Ref, Schema } from "effect"
import * as Action from "../../../src/Action.ts"
import { Unauthorized } from "../../../src/ActionError.ts"
import * as Agent from "../../../src/Agent.ts"
import * as Role from "../../../src/Role.ts"

const identity = (name: string) => ({ name, goal: "goal", domain: "domain" })

const greet = Action.local({
  description: "Greet someone",
  parameters: { name: Schema.String },
  run: ({ name }) => `hello ${name}`
})

const failing = Action.local({
  description: "Always fails",
  parameters: {},
  run: () => Promise.reject(new Error("nope"))
})

const withHooks = (hooks: Role.Hooks) =>
  Role.make({ identity: identity("greeter"), hooks, actions: { greet, failing } })

describe("Hooks (SPEC §9 steps 3 and 10)", () => {
  it.effect("before may change the arguments; after sees the converted arguments and the result", () =>
    Effect.gen(function* () {
      const log = yield* Ref.make<ReadonlyArray<unknown>>([])
      const role = withHooks({
        before: (action, args) => ({ ...args, name: String(args.name).toUpperCase(), action }),
        after: (action, args, result) => Ref.update(log, (all) => [...all, { action, args, result }])
      })
      const agent = yield* Agent.make({ id: "a", roles: [role] })
      assert.strictEqual(yield* agent.executeAction("greet", { name: "ada" }), "hello ADA")
      assert.deepStrictEqual(yield* Ref.get(log), [{ action: "greet", args: { name: "ADA" }, result: "hello ADA" }])
    })
  )

  it.effect("after runs only on success", () =>
    Effect.gen(function* () {
      const calls = yield* Ref.make(0)
      const agent = yield* Agent.make({
        id: "a",
        roles: [withHooks({ after: () => Ref.update(calls, (n) => n + 1) })]
      })
      const error = yield* Effect.flip(agent.executeAction("failing", {}))
      assert.strictEqual(error._tag, "ExecutionFailure")
      assert.strictEqual(yield* Ref.get(calls), 0)
    })
  )

  it.effect("a before hook that throws or fails is EXECUTION and the action does not run", () =>
    Effect.gen(function* () {
      const ran = yield* Ref.make(0)
      const counted = Action.local({
        description: "Counts",
        parameters: {},
        run: () => Ref.update(ran, (n) => n + 1)
      })
      const cases: ReadonlyArray<Role.Hooks["before"]> = [
        () => {
          throw new Error("hook threw")
        },
        () => Effect.fail("hook failed"),
        () => Effect.die(new Error("hook died"))
      ]
      for (const before of cases) {
        const role = Role.make({ identity: identity("r"), hooks: { before }, actions: { counted } })
        const agent = yield* Agent.make({ id: "a", roles: [role] })
        const error = yield* Effect.flip(agent.executeAction("counted", {}))
        assert.strictEqual(error._tag, "ExecutionFailure")
        assert.include(error.message, "before hook failed")
      }
      assert.strictEqual(yield* Ref.get(ran), 0)
    })
  )

  it.effect("a hook that fails with an ActionError keeps its category; an after hook failure is EXECUTION", () =>
    Effect.gen(function* () {
      const denied = new Unauthorized({ action: "greet", message: "not on Sundays" })
      const before = yield* Agent.make({ id: "a", roles: [withHooks({ before: () => Effect.fail(denied) })] })
      assert.strictEqual(yield* Effect.flip(before.executeAction("greet", { name: "x" })), denied)
      const after = yield* Agent.make({
        id: "b",
        roles: [
          withHooks({
            after: () => {
              throw new Error("audit log down")
            }
          })
        ]
      })
      const error = yield* Effect.flip(after.executeAction("greet", { name: "x" }))
      assert.deepStrictEqual(
        [error._tag, error.message],
        ["ExecutionFailure", "greet: after hook failed: audit log down"]
      )
    })
  )

  it.effect("a before hook that returns no arguments object is VALIDATION", () =>
    Effect.gen(function* () {
      const agent = yield* Agent.make({ id: "a", roles: [withHooks({ before: () => null as never })] })
      const error = yield* Effect.flip(agent.executeAction("greet", { name: "x" }))
      assert.strictEqual(error._tag, "ValidationError")
    })
  )
})
