// Every fault of a durable run is typed (C52, C53 on the in-memory engine; on Postgres in
// test/durable/faults.test.ts): text the store cannot hold is VALIDATION naming the field, an unreachable store
// TRANSIENT naming it, a stored row that does not decode EXECUTION naming the run — from start, status, decide,
// cancel and await alike, never a defect; a turn that dies or meets a record that does not decode ends Failed.
import { assert, describe, it } from "@effect/vitest"
import { Chat, StoreBoundary } from "@rolecraft/core"
import * as Model from "@rolecraft/core/LanguageModel"
import { Cause, Effect, Exit, Layer, Option, Ref } from "effect"
import * as fc from "fast-check"
import { DurableChat, RunStore } from "../src/index.ts"
import { makeAgent, refundModel } from "./support/refunds.ts"

type Mode = "up" | "down" | "corrupt"

const storeName = "the durable run store (test)"

/**
 * The in-memory run store behind a switch: "down" fails every operation as a driver would (TRANSIENT, through
 * `StoreBoundary.guard`), "corrupt" reads every status as a row that does not decode (through the store's own
 * decoding).
 */
const switched = (mode: Ref.Ref<Mode>) =>
  Layer.effect(
    RunStore.RunStore,
    Effect.gen(function* () {
      const inner = yield* RunStore.RunStore
      const gate = <A>(what: string, operation: Effect.Effect<A, StoreBoundary.StoreError>) =>
        Effect.flatMap(Ref.get(mode), (now) =>
          now === "down"
            ? StoreBoundary.guard(storeName, what, Effect.die(new Error("Connection terminated unexpectedly")))
            : operation
        )
      return RunStore.RunStore.of({
        ...inner,
        create: (w, r) => gate("create a run", inner.create(w, r)),
        get: (w, r) =>
          Effect.flatMap(Ref.get(mode), (now) =>
            now === "corrupt"
              ? Effect.map(
                  StoreBoundary.decodeRow(storeName, `status of run ${JSON.stringify(r)}`, RunStore.RunStatus, {
                    _tag: "AwaitingApproval",
                    pending: "truncated"
                  }),
                  Option.some
                )
              : gate("read a run", inner.get(w, r))
          ),
        set: (w, r, s) => gate("write a run", inner.set(w, r, s)),
        recordStep: (w, r, s, b) => gate("record a step", inner.recordStep(w, r, s, b)),
        readStep: (w, r, s) => gate("read a step", inner.readStep(w, r, s)),
        readSteps: (w, r) => gate("read the steps", inner.readSteps(w, r))
      })
    })
  ).pipe(Layer.provide(RunStore.layerMemory))

const setup = (model = refundModel(() => Effect.void)) =>
  Effect.gen(function* () {
    const mode = yield* Ref.make<Mode>("up")
    const refunds: Array<string> = []
    const agent = yield* makeAgent({ onRefund: (order) => Effect.sync(() => void refunds.push(order)) })
    const turns = DurableChat.make("support")
    const engine = Layer.mergeAll(DurableChat.layerTest, switched(mode))
    const context = yield* Layer.build(turns.layer(agent).pipe(Layer.provideMerge(engine), Layer.provide(model)))
    const run = <A, E>(effect: Effect.Effect<A, E, DurableChat.Services>) => Effect.provide(effect, context)
    return { mode, refunds, turns, run }
  })

/** A failure's category and where it points (the issue path, or "-"), or "defect"/"ok". */
const answer = <A>(exit: Exit.Exit<A, { readonly category: string; readonly _tag: string }>): string => {
  if (Exit.isSuccess(exit)) return "ok"
  const error = Exit.findErrorOption(exit)
  if (error._tag === "None") return `defect: ${Cause.pretty(exit.cause)}`
  // An action error of the category's own class, not a store's error passed through.
  const classes: Record<string, string> = {
    VALIDATION: "ValidationError",
    TRANSIENT: "TransientFailure",
    EXECUTION: "ExecutionFailure",
    APPROVAL: "ApprovalRequired"
  }
  if (classes[error.value.category] !== error.value._tag) return `${error.value._tag} (${error.value.category})`
  const issues = (error.value as { readonly issues?: ReadonlyArray<{ readonly path: string }> }).issues
  return `${error.value.category} ${issues?.[0]?.path ?? "-"}`
}

const waitFor = (turns: DurableChat.DurableChat, runId: string, tag: RunStore.RunStatus["_tag"]) =>
  turns.status(runId).pipe(
    Effect.tap(() => Effect.sleep("5 millis")),
    Effect.repeat({ until: (s) => s._tag === tag || RunStore.isFinal(s) })
  )

describe("every operation answers a store fault typed, never a defect", () => {
  const operations = (turns: DurableChat.DurableChat) =>
    [
      // A second start of r-1: its insert finds the run, whose stored status is then read to say so.
      ["start", turns.start("r-1", "order-2")],
      ["status", turns.status("r-1")],
      ["decide", turns.decide("r-1", { call_1: Chat.approve("alice") })],
      ["cancel", turns.cancel("r-1")],
      ["await", turns.await("r-1", { pollInterval: "5 millis" })]
    ] as const

  it.live("a store that cannot be reached: TRANSIENT naming the store, for every operation; then it works again", () =>
    Effect.gen(function* () {
      const { mode, turns, run } = yield* setup()
      yield* run(turns.start("r-1", "order-1"))
      yield* run(waitFor(turns, "r-1", "AwaitingApproval"))
      yield* Ref.set(mode, "down")
      for (const [name, operation] of operations(turns)) {
        const exit = yield* Effect.exit(
          run(operation as Effect.Effect<unknown, DurableChat.Failure, DurableChat.Services>)
        )
        assert.strictEqual(answer(exit), "TRANSIENT -", name)
        const error = Exit.findErrorOption(exit)
        if (error._tag === "Some") {
          assert.include(error.value.message, `${name}: ${storeName} could not`, name)
          assert.include(error.value.message, "Connection terminated unexpectedly", name)
        }
      }
      yield* Ref.set(mode, "up")
      yield* run(turns.decide("r-1", { call_1: Chat.approve("alice") }))
      assert.strictEqual((yield* run(turns.await("r-1", { pollInterval: "5 millis" })))._tag, "Done")
    }).pipe(Effect.scoped)
  )

  it.live("a stored status that does not decode: EXECUTION naming the run and the field, for every operation", () =>
    Effect.gen(function* () {
      const { mode, turns, run } = yield* setup()
      yield* run(turns.start("r-1", "order-1"))
      yield* run(waitFor(turns, "r-1", "AwaitingApproval"))
      yield* Ref.set(mode, "corrupt")
      for (const [name, operation] of operations(turns)) {
        const exit = yield* Effect.exit(
          run(operation as Effect.Effect<unknown, DurableChat.Failure, DurableChat.Services>)
        )
        assert.strictEqual(answer(exit), "EXECUTION -", name)
        const error = Exit.findErrorOption(exit)
        if (error._tag === "Some") {
          assert.include(error.value.message, `the stored status of run "r-1" does not decode at pending`, name)
        }
      }
    }).pipe(Effect.scoped)
  )
})

// Ids a store cannot hold (C52): each refused as VALIDATION at `runId` by every operation, none merged with another.
const badIds: ReadonlyArray<readonly [string, string]> = [
  ["a NUL", "run\u0000x"],
  ["a lone high surrogate", "s\uD800x"],
  ["another lone high surrogate", "s\uDBFFx"],
  ["a lone low surrogate", "s\uDC00x"],
  ["a reversed pair", "s\uDC00\uD800x"],
  ["a high surrogate at the end", "s\uD83D"],
  ["201 characters", "r".repeat(201)],
  ["nothing", ""]
]

describe("ids and text a store cannot hold", () => {
  it.live(
    "a run id with a NUL, a lone surrogate or past 200 characters: VALIDATION at runId from every operation",
    () =>
      Effect.gen(function* () {
        const { turns, run } = yield* setup()
        for (const [what, id] of badIds) {
          const operations = [
            turns.start(id, "order-1"),
            turns.status(id),
            turns.decide(id, { call_1: Chat.approve("alice") }),
            turns.cancel(id),
            turns.await(id)
          ] as ReadonlyArray<Effect.Effect<unknown, DurableChat.Failure, DurableChat.Services>>
          for (const operation of operations) {
            assert.strictEqual(answer(yield* Effect.exit(run(operation))), "VALIDATION runId", what)
          }
        }
        // Ids a store can hold round-trip as themselves, each its own run.
        for (const id of ["s\uD83D\uDE00x", "r".repeat(200), `"quoted"/slashed\\`, "é"]) {
          yield* run(turns.start(id, "order-1"))
          assert.strictEqual((yield* run(waitFor(turns, id, "AwaitingApproval")))._tag, "AwaitingApproval")
        }
      }).pipe(Effect.scoped)
  )

  it.live("property: any id is either its own run or VALIDATION at runId; never a defect, never merged", () =>
    Effect.gen(function* () {
      const { turns, run } = yield* setup()
      const started = new Set<string>()
      yield* Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(fc.string({ unit: "binary", minLength: 0, maxLength: 12 }), async (id) => {
            const exit = await Effect.runPromise(Effect.exit(run(turns.start(id, "order-1"))))
            const said = answer(exit)
            if (said === "VALIDATION runId") {
              return StoreBoundary.textProblem(id) !== undefined || id.length === 0 || started.has(id)
            }
            if (said !== "ok") return false
            started.add(id)
            const status = await Effect.runPromise(Effect.exit(run(turns.status(id))))
            return Exit.isSuccess(status)
          }),
          { numRuns: 40 }
        )
      )
      // Every accepted id is a run of its own: as many runs as accepted ids.
      for (const id of started) assert.strictEqual(answer(yield* Effect.exit(run(turns.status(id)))), "ok")
    }).pipe(Effect.scoped)
  )

  it.live(
    "an approver or reason with a NUL or a lone surrogate: VALIDATION at the decision's field; nothing recorded",
    () =>
      Effect.gen(function* () {
        const { turns, run, refunds } = yield* setup()
        yield* run(turns.start("r-1", "order-1"))
        yield* run(waitFor(turns, "r-1", "AwaitingApproval"))
        const refused = [
          [Chat.approve("ali\u0000ce"), "VALIDATION decisions.call_1.approver"],
          [Chat.approve("ali\uD800ce"), "VALIDATION decisions.call_1.approver"],
          [Chat.reject("bob", "no\u0000pe"), "VALIDATION decisions.call_1.reason"],
          [Chat.reject("bob", "no\uDC00pe"), "VALIDATION decisions.call_1.reason"],
          [Chat.reject("bob", "x".repeat(StoreBoundary.maxTextLength + 1)), "VALIDATION decisions.call_1.reason"]
        ] as const
        for (const [decision, expected] of refused) {
          assert.strictEqual(answer(yield* Effect.exit(run(turns.decide("r-1", { call_1: decision })))), expected)
        }
        // Nothing was recorded: the next decision is the first.
        yield* run(turns.decide("r-1", { call_1: Chat.approve("alice") }))
        assert.strictEqual((yield* run(turns.await("r-1", { pollInterval: "5 millis" })))._tag, "Done")
        assert.deepStrictEqual(refunds, ["order-1"])
      }).pipe(Effect.scoped)
  )
})

describe("a turn that cannot go on ends Failed, never stays Running", () => {
  it.live("a model call that dies: the run ends Failed EXECUTION", () =>
    Effect.gen(function* () {
      const dying = Layer.succeed(
        Model.LanguageModel,
        Model.make(() => Effect.die(new Error("the model's client crashed")), { name: "dying" })
      )
      const { turns, run } = yield* setup(dying)
      yield* run(turns.start("r-1", "order-1"))
      const final = yield* run(turns.await("r-1", { pollInterval: "5 millis" }))
      assert.deepStrictEqual(final, {
        _tag: "Failed",
        category: "EXECUTION",
        message: "chat: model call failed: the model's client crashed"
      })
    }).pipe(Effect.scoped)
  )

  it.live("a recorded step that does not decode: the run ends Failed EXECUTION naming the run and the step", () =>
    Effect.gen(function* () {
      const { turns, run } = yield* setup()
      // A record of the run's first model call, edited by hand before the run reads it.
      yield* run(
        Effect.flatMap(Effect.service(RunStore.RunStore), (store) =>
          store.recordStep("support", "r-1", "model/1", '{"tools":7}')
        )
      )
      yield* run(turns.start("r-1", "order-1"))
      const final = yield* run(turns.await("r-1", { pollInterval: "5 millis" }))
      assert.strictEqual(final._tag, "Failed")
      if (final._tag !== "Failed") return
      assert.strictEqual(final.category, "EXECUTION")
      assert.include(final.message, 'the stored step "model/1" of run "r-1" does not decode at tools')
    }).pipe(Effect.scoped)
  )
})
