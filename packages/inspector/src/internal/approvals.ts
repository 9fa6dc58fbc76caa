/**
 * The inspector's approvals inbox: the pending calls of one approval store,
 * each with what the page shows of it — the agent path, the action (and MCP
 * tool), the arguments exactly as the store recorded them (after the agent's
 * redaction boundary), the reason, and the tool results its turn had seen
 * when its content was traced — and a decision on one by its listing key,
 * through the store's own rules (`ApprovalStore`'s `decide`). A watcher
 * reads the listing on an interval and signals the page when it changed.
 */
import { type ApprovalStore, Decision, StoreBoundary } from "@rolecraft/core"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as PubSub from "effect/PubSub"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Runs from "../Runs.ts"
import type * as Traces from "../Traces.ts"

/** One pending call as the page shows it. */
export interface Pending {
  readonly key: string
  readonly agents: ReadonlyArray<string>
  readonly action: string
  readonly tool: string | undefined
  readonly arguments: string | undefined
  readonly reason: string
  readonly requestedAt: number
  readonly expiresAt: number
  readonly turn: string | undefined
  readonly call: string | undefined
  readonly before: ReadonlyArray<Runs.ToolResult>
}

/** What deciding answered: recorded now, or refused with the store's message (who decided, expired, unknown). */
export type Outcome =
  | { readonly _tag: "Recorded"; readonly decision: string }
  | { readonly _tag: "Refused"; readonly check: string; readonly message: string }

/** The inbox of a store (or of none). */
export interface Inbox {
  readonly configured: boolean
  readonly list: Effect.Effect<ReadonlyArray<Pending>, StoreBoundary.StoreError>
  readonly decide: (key: string, decision: Decision.Decision) => Effect.Effect<Outcome, StoreBoundary.StoreError>
}

const notConfigured = new StoreBoundary.StoreError({
  store: "the inspector",
  category: "VALIDATION",
  message: "the inspector has no approval store (give it `approvals`, or start the bin with --approvals URL)"
})

export const make = (store: ApprovalStore.Service | undefined, traces: Traces.Traces): Inbox => ({
  configured: store !== undefined,
  list:
    store === undefined
      ? Effect.succeed([])
      : Effect.gen(function* () {
          const pending = yield* store.list({ limit: 1_000 })
          const spans = yield* traces.spans
          return pending.map(
            (token): Pending => ({
              key: token.key,
              agents: token.agents,
              action: token.binding.action,
              tool: token.binding.tool,
              arguments: token.arguments,
              reason: token.reason,
              requestedAt: token.requestedAt,
              expiresAt: token.expiresAt,
              turn: token.scope?.turn,
              call: token.scope?.call,
              before:
                token.scope === undefined ? [] : Runs.toolResultsBefore(spans, token.scope.turn, token.requestedAt)
            })
          )
        }),
  decide: (key, decision) => {
    if (store === undefined) return Effect.fail(notConfigured)
    return store.decide(key, decision).pipe(
      Effect.map((decided): Outcome => {
        if (!decided.repeated) return { _tag: "Recorded", decision: Decision.describe(decided.decision) }
        // The same decision again changes nothing: the page says who decided (and whether the call ran).
        const ran = decided.status === "used" ? " (the call has run)" : ""
        return {
          _tag: "Refused",
          check: "decided",
          message: `${Decision.alreadyDecided(decided.decision)}${ran}`
        }
      }),
      Effect.catchTag("ApprovalTokenError", (error) =>
        Effect.succeed<Outcome>({ _tag: "Refused", check: error.check, message: error.message })
      )
    )
  }
})

/**
 * Reads the listing every `interval` for the life of the scope and
 * publishes `"approvals"` when the pending keys changed (a failing read is
 * retried at the next tick).
 */
export const watch = (
  inbox: Inbox,
  changes: PubSub.PubSub<string>,
  interval: Duration.Duration
): Effect.Effect<void, never, Scope.Scope> => {
  if (!inbox.configured) return Effect.void
  let last = ""
  const look = inbox.list.pipe(
    Effect.flatMap((pending) => {
      const now = pending.map((entry) => entry.key).join(",")
      if (now === last) return Effect.void
      last = now
      return PubSub.publish(changes, "approvals")
    }),
    Effect.ignore
  )
  return Effect.asVoid(Effect.forkScoped(Effect.repeat(look, Schedule.spaced(interval))))
}
