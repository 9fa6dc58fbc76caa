/**
 * The MCP connections of one agent, and the one a call borrows.
 *
 * The pool, on Effect's `RcMap`: one entry per server key, opened lazily by
 * the first call that needs it, borrowed by each call for its duration
 * (`get` needs the call's `Scope`) and closed with the agent's scope.
 *
 * - Entries never expire while idle (infinite idle time-to-live): a
 *   connection, once open, serves every later call until it is lost.
 * - Opening runs in the entry's own fiber (`RcMap` forks the lookup), so a
 *   caller that times out or is interrupted does not abandon a half-open
 *   connection: the next call gets it.
 * - A connection found closed (the server exited, the transport dropped) is
 *   invalidated and the next call reconnects at once; calls still borrowing
 *   it keep it until they finish.
 * - A failed connect is remembered: until its backoff has passed (500 ms,
 *   doubling per consecutive failure, at most 30 s) calls fail fast instead of
 *   spawning the server again — no tight respawn loop; such a call is
 *   TRANSIENT with the time left as `retryAfter`.
 * - A listing of a server's tools that ends early (its cursor does not
 *   advance) is published to the agent's events as `McpToolListingStopped`.
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as RcMap from "effect/RcMap"
import type * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import type * as Action from "../../../Action.ts"
import { type ActionError, TransientFailure } from "../../../ActionError.ts"
import {
  type Connection,
  describeServer,
  type ListingStopped,
  type McpClient,
  type Notification,
  McpClientError
} from "../../../McpClient.ts"
import * as EventHub from "../../events/hub.ts"
import * as VisibleText from "../../../VisibleText.ts"
import * as Sanitise from "./sanitise.ts"
import type * as Events from "../../../Events.ts"
import { diagnostics, toActionError } from "./failure.ts"

/**
 * A connect failed recently and its backoff has not passed: `error` is that
 * failure, `retryAfterMs` the time left.
 */
export interface BackingOff {
  readonly _tag: "BackingOff"
  readonly error: McpClientError
  readonly retryAfterMs: number
}

/** What an entry holds: the open connection, or the failed connect with its backoff. */
type Slot =
  | { readonly _tag: "Open"; readonly connection: Connection }
  | { readonly _tag: "Failed"; readonly error: McpClientError; readonly failures: number; readonly retryAt: number }

type Open = () => Effect.Effect<Connection, McpClientError, Scope.Scope>

/**
 * The pool: `get(key, open)` borrows the open connection of `key` for the
 * current scope, opening it with `open()` when there is none;
 * `drop(key, connection)` invalidates a connection that failed so the next
 * `get` reconnects (it closes once no call borrows it).
 */
export interface Pool {
  readonly get: (key: string, open: Open) => Effect.Effect<Connection, McpClientError | BackingOff, Scope.Scope>
  readonly drop: (key: string, connection: Connection) => Effect.Effect<void>
  /** Publishes that a listing of `action`'s server ended early, as the agent's `McpToolListingStopped` event. */
  readonly listingStopped: (action: string, server: string, stopped: ListingStopped) => Effect.Effect<void>
  /** Publishes what `action`'s server told unasked, as the agent's `McpToolCallProgressed` or `McpServerLogged`. */
  readonly notified: (action: string, server: string, notification: Notification) => Effect.Effect<void>
  /** Publishes an event of the agent's, made from its id and the time. */
  readonly publish: (event: (agentId: string, timestamp: number) => Events.Event) => Effect.Effect<void>
}

const backoffMs = (failures: number): number => Math.min(30_000, 500 * 2 ** Math.max(0, failures - 1))

const toClientError = (cause: Cause.Cause<McpClientError>): McpClientError => {
  const error = Cause.squash(cause)
  return error instanceof McpClientError
    ? error
    : new McpClientError({ reason: "Connect", sent: false, message: String(error), cause: error })
}

/**
 * Makes the pool of one agent (`agentId`, whose `hub` gets its events); its connections close with the
 * current scope.
 */
export const make = (agentId: string, hub: EventHub.Hub): Effect.Effect<Pool, never, Scope.Scope> =>
  Effect.gen(function* () {
    // The opener of the latest `get` per key (a key names one server and client, so any opener of it will do).
    const openers = new Map<string, Open>()
    // The slot each key's entry currently holds, and its count of consecutive failed connects.
    const current = new Map<string, Slot>()
    const failures = new Map<string, number>()

    const lookup = (key: string): Effect.Effect<Slot, never, Scope.Scope> =>
      Effect.gen(function* () {
        const exit = yield* Effect.exit(openers.get(key)!())
        let slot: Slot
        if (Exit.isSuccess(exit)) {
          failures.delete(key)
          slot = { _tag: "Open", connection: exit.value }
        } else {
          if (Exit.hasInterrupts(exit)) return yield* Effect.interrupt
          const count = (failures.get(key) ?? 0) + 1
          failures.set(key, count)
          const now = yield* Clock.currentTimeMillis
          slot = { _tag: "Failed", error: toClientError(exit.cause), failures: count, retryAt: now + backoffMs(count) }
        }
        current.set(key, slot)
        return slot
      })

    const map = yield* RcMap.make({ lookup, idleTimeToLive: Duration.infinity })

    const invalidate = (key: string, slot: Slot) =>
      Effect.suspend(() => {
        if (current.get(key) !== slot) return Effect.void
        current.delete(key)
        return RcMap.invalidate(map, key)
      })

    const get: Pool["get"] = (key, open) =>
      Effect.suspend(() => {
        openers.set(key, open)
        // A failed slot seen before this call waited was someone else's failure: back off from it.
        const before = current.get(key)
        return Effect.flatMap(
          RcMap.get(map, key),
          (slot): Effect.Effect<Connection, McpClientError | BackingOff, Scope.Scope> => {
            if (slot._tag === "Open") {
              if (slot.connection.isOpen()) return Effect.succeed(slot.connection)
              return Effect.andThen(invalidate(key, slot), get(key, open))
            }
            if (slot !== before) return Effect.fail(slot.error)
            return Effect.flatMap(Clock.currentTimeMillis, (now) =>
              now < slot.retryAt
                ? Effect.fail<BackingOff>({ _tag: "BackingOff", error: slot.error, retryAfterMs: slot.retryAt - now })
                : Effect.andThen(invalidate(key, slot), get(key, open))
            )
          }
        )
      })

    const drop: Pool["drop"] = (key, connection) =>
      Effect.suspend(() => {
        const slot = current.get(key)
        return slot?._tag === "Open" && slot.connection === connection ? invalidate(key, slot) : Effect.void
      })

    const listingStopped: Pool["listingStopped"] = (action, server, stopped) =>
      Effect.flatMap(Clock.currentTimeMillis, (timestamp) =>
        EventHub.publish(hub, {
          _tag: "McpToolListingStopped",
          agentId,
          action,
          server,
          reason: stopped.reason,
          pages: stopped.pages,
          tools: stopped.tools,
          message: stopped.message,
          timestamp
        })
      )

    const notified: Pool["notified"] = (action, server, notification) =>
      Effect.flatMap(Clock.currentTimeMillis, (timestamp) =>
        EventHub.publish(
          hub,
          notification._tag === "Progress"
            ? {
                _tag: "McpToolCallProgressed",
                agentId,
                action,
                server,
                tool: notification.tool,
                progress: notification.progress,
                ...(notification.total === undefined ? {} : { total: notification.total }),
                ...(notification.message === undefined ? {} : { message: notification.message }),
                timestamp
              }
            : {
                _tag: "McpServerLogged",
                agentId,
                action,
                server,
                level: notification.level,
                ...(notification.logger === undefined ? {} : { logger: notification.logger }),
                message: notification.data,
                timestamp
              }
        )
      )

    const publish: Pool["publish"] = (event) =>
      Effect.flatMap(Clock.currentTimeMillis, (timestamp) => EventHub.publish(hub, event(agentId, timestamp)))

    return { get, drop, listingStopped, notified, publish }
  })

/** The credential a connection is opened with (`apiKeyEnv` and its value). */
export type Credential = { readonly variable: string; readonly value: Redacted.Redacted<string> }

const clientIds = new WeakMap<object, number>()
let nextClientId = 0

/** Connections are per agent and per service instance (a test may swap layers between calls). */
const clientId = (client: object): number => {
  let id = clientIds.get(client)
  if (id === undefined) {
    id = nextClientId++
    clientIds.set(client, id)
  }
  return id
}

const backingOff = (name: string, action: Action.McpTool<any, any>, failure: BackingOff) =>
  new TransientFailure({
    action: name,
    retryAfter: Duration.millis(failure.retryAfterMs),
    message:
      `${name}: not reconnecting to ${describeServer(action.server)} for another ${failure.retryAfterMs} ms ` +
      `after the last attempt failed: ${diagnostics(failure.error)}`,
    cause: failure.error
  })

/**
 * The connection of one call: `key` names it in the pool (the client
 * instance and the action's server), `get` borrows it, opening it when there
 * is none; a failure to open is mapped to its category.
 */
export const connectionOf = (
  call: { readonly name: string; readonly action: Action.McpTool<any, any>; readonly agent: { readonly mcp: Pool } },
  client: McpClient["Service"],
  credential: Credential | undefined,
  prepared: { readonly serverKey: string; readonly timeout: Duration.Duration }
): { readonly key: string; readonly get: Effect.Effect<Connection, ActionError, Scope.Scope> } => {
  const { name, action } = call
  const key = `${clientId(client)}|${prepared.serverKey}`
  const server = describeServer(action.server)
  // What the server supplies for a model to read is read without the characters a person cannot see.
  const report = (finding: Sanitise.Finding) =>
    call.agent.mcp.publish((agentId, timestamp) => ({
      _tag: "McpTextSanitised",
      agentId,
      action: name,
      server,
      ...(finding.tool === undefined ? {} : { tool: finding.tool }),
      fields: finding.fields,
      removed: finding.removed.length,
      codePoints: [...new Set(finding.removed)].slice(0, 32).map(VisibleText.codePointName),
      leftOut: finding.leftOut,
      timestamp
    }))
  const open = () =>
    Effect.flatMap(
      client.connect(action.server, {
        name,
        ...(credential === undefined ? {} : { credential }),
        onListingStopped: (stopped) => call.agent.mcp.listingStopped(name, server, stopped),
        onNotification: (notification) => call.agent.mcp.notified(name, server, notification)
      }),
      (opened) => Sanitise.connection(opened, report)
    )
  const mapped = (error: McpClientError) =>
    toActionError(name, name, error, { idempotent: true, timeout: prepared.timeout })
  const get = Effect.mapError(call.agent.mcp.get(key, open), (error) => {
    if (error._tag !== "BackingOff") return mapped(error)
    // A refusal that retrying cannot cure (HTTP 401 or 403, a 4xx) keeps its own category while backing off.
    const last = mapped(error.error)
    return last._tag === "ExecutionFailure" || last._tag === "ValidationError" ? last : backingOff(name, action, error)
  })
  return { key, get }
}
