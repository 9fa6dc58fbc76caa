/**
 * Approval helpers for tests: approve or reject the pending token
 * an `ApprovalRequired` carries, pre-approve a token for exact arguments, and
 * a recording store (optionally approving every request at once) built with
 * `ApprovalStore.make`, the constructor of the real stores.
 *
 * @example
 * ```ts
 * import { Action, Agent, Role } from "@rolecraft/core"
 * import { Approvals } from "@rolecraft/testing"
 * import { Effect, Schema } from "effect"
 *
 * const Support = Role.make({
 *   identity: { name: "support", goal: "Refund customers", domain: "support" },
 *   actions: {
 *     refund: Action.local({
 *       description: "Refund an order",
 *       parameters: { order: Schema.String },
 *       run: ({ order }) => `refunded ${order}`
 *     }).pipe(Action.requireApproval({ reason: "Moves money" }))
 *   }
 * })
 *
 * const program = Effect.gen(function* () {
 *   const agent = yield* Agent.make({ id: "test", roles: [Support] })
 *   const refused = yield* Effect.flip(agent.executeAction("refund", { order: "A-1" }))
 *   const token = yield* Approvals.approvePending(agent.approvals, refused)
 *   return yield* agent.executeAction("refund", { order: "A-1", _approval_token: token }) // "refunded A-1"
 * }).pipe(Effect.scoped)
 * ```
 *
 * @since 0.1.0
 */
import { type ActionError, Approval, ApprovalStore, type StoreBoundary } from "@rolecraft/core"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

type Store = ApprovalStore.ApprovalStore["Service"]

const pendingOf = (error: unknown): Effect.Effect<string, ApprovalStore.ApprovalTokenError> => {
  const failure = error as Partial<ActionError.ApprovalRequired> | undefined
  return failure?._tag === "ApprovalRequired" && typeof failure.pendingTokenId === "string"
    ? Effect.succeed(failure.pendingTokenId)
    : Effect.fail(
        new ApprovalStore.ApprovalTokenError({
          check: "missing",
          message: "the error is not an ApprovalRequired carrying a pendingTokenId"
        })
      )
}

/**
 * Approves the `pendingTokenId` of an `ApprovalRequired` error (what a call
 * without a token fails with) in `store` — `agent.approvals` or the
 * `ApprovalStore` the calls use — and returns the token id to send as
 * `_approval_token`.
 *
 * Fails `ApprovalTokenError` when `error` has no pending token (`check:
 * "missing"`) or the store refuses (expired, unknown, already decided
 * otherwise, …), `StoreBoundary.StoreError` when the store cannot hold the
 * approver or cannot be reached.
 *
 * @category approvals
 * @since 0.1.0
 */
export const approvePending = (
  store: Store,
  error: unknown,
  approver = "test"
): Effect.Effect<string, ApprovalStore.ApprovalTokenError | StoreBoundary.StoreError> =>
  Effect.flatMap(pendingOf(error), (id) => Effect.as(store.approve(id, approver), id))

/**
 * Rejects the `pendingTokenId` of an `ApprovalRequired` error in `store`;
 * returns the token id. Fails as {@link approvePending} does.
 *
 * @category approvals
 * @since 0.1.0
 */
export const rejectPending = (
  store: Store,
  error: unknown,
  why = "rejected in a test",
  approver = "test"
): Effect.Effect<string, ApprovalStore.ApprovalTokenError | StoreBoundary.StoreError> =>
  Effect.flatMap(pendingOf(error), (id) => Effect.as(store.reject(id, approver, why), id))

/**
 * Requests and approves, in `store`, a token bound to one call — agent,
 * action, tool (for mcpTool actions) and these raw `params` (without the
 * token) — and returns its id. `ttl` defaults to 15 minutes.
 *
 * Fails `ValidationError` when `params` cannot be serialised.
 *
 * @category approvals
 * @since 0.1.0
 */
export const preapprove = (
  store: Store,
  options: {
    readonly agentId: string
    readonly action: string
    readonly tool?: string | undefined
    readonly params: Readonly<Record<string, unknown>>
    readonly reason?: string | undefined
    readonly ttl?: Duration.Input | undefined
    readonly approver?: string | undefined
  }
): Effect.Effect<string, ActionError.ValidationError> =>
  Effect.gen(function* () {
    const binding = yield* Approval.bindingOf(options.agentId, options.action, options.tool, options.params)
    const id = yield* Effect.orDie(store.request(binding, options.reason ?? "pre-approved in a test", options.ttl))
    yield* Effect.orDie(store.approve(id, options.approver ?? "test"))
    return id
  })

/**
 * What the recording store saw: every token requested, as it was when
 * requested (after auto-approval, when on).
 *
 * @category services
 * @since 0.1.0
 */
export class Recorder extends Context.Service<
  Recorder,
  { readonly requests: Effect.Effect<ReadonlyArray<ApprovalStore.Token>> }
>()("@rolecraft/testing/Approvals/Recorder") {}

/**
 * A recording in-memory store: the real store's rules (`ApprovalStore.make`)
 * over memory, recording each request. With `autoApprove`, every requested
 * token is approved at once by `approver` (default `"test"`): a call without
 * a token still fails `ApprovalRequired` (`check: "missing"`), and its
 * `pendingTokenId` is then usable as is.
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = (
  options: { readonly autoApprove?: boolean | undefined; readonly approver?: string | undefined } = {}
): { readonly store: Store; readonly recorder: Recorder["Service"] } => {
  const memory = ApprovalStore.memoryStorage()
  const requests: Array<ApprovalStore.Token> = []
  const storage: ApprovalStore.Storage = {
    ...memory,
    insert: (token) => {
      const stored: ApprovalStore.Token =
        options.autoApprove === true
          ? { ...token, status: "approved", approver: options.approver ?? "test", decidedAt: token.requestedAt }
          : token
      return Effect.andThen(
        Effect.sync(() => requests.push(stored)),
        memory.insert(stored)
      )
    }
  }
  return {
    store: ApprovalStore.make(storage),
    recorder: Recorder.of({ requests: Effect.sync(() => [...requests]) })
  }
}

/**
 * {@link make} as a layer providing `ApprovalStore` and its `Recorder`; each
 * build is a fresh store.
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = (
  options: { readonly autoApprove?: boolean | undefined; readonly approver?: string | undefined } = {}
): Layer.Layer<ApprovalStore.ApprovalStore | Recorder> =>
  Layer.effectContext(
    Effect.sync(() => {
      const { store, recorder } = make(options)
      return Context.make(ApprovalStore.ApprovalStore, store).pipe(Context.add(Recorder, recorder))
    })
  )
