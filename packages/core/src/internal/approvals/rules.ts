/**
 * The approval store's rules, the same on every storage: text bound for the
 * store checked at the store boundary (VALIDATION naming the field), expiry
 * on Effect's `Clock`, the binding checks, a pending token decided once
 * (`Decision.judge`: the same decision again is that decision; another is
 * refused as `"decided"`), single use, and one live pending token for a call
 * asked for again (requests of the same binding, reason, time to live and
 * scope share it, within one store value).
 */
import * as Cache from "effect/Cache"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { ApprovalCheck } from "../../ActionError.ts"
import * as Decision from "../../Decision.ts"
import * as StoreBoundary from "../../StoreBoundary.ts"
import {
  ApprovalTokenError,
  type Binding,
  type Decided,
  type RequestOptions,
  type Scope,
  type Service,
  type Storage,
  type Token
} from "./storage.ts"

// node:crypto takes tens of milliseconds to load: it is loaded by the first token, not at import.
const nodeCrypto = () => process.getBuiltinModule("node:crypto")

/** The SHA-256 (hex) of an idempotency key, as a used token records it. */
const keyDigest = (key: string): string => nodeCrypto().hash("sha256", key, "hex")

/** A fresh token id: 24 random bytes from `node:crypto`, base64url (32 characters, 192 bits). */
export const newTokenId = (): string => nodeCrypto().randomBytes(24).toString("base64url")

/** The default time to live of a requested token: 15 minutes. */
export const defaultTtl: Duration.Duration = Duration.minutes(15)

/** How many calls asked for again the store remembers the live pending token of. */
const remembered = 10_000

const checkMessages: Record<ApprovalCheck, string> = {
  missing: "no approval token was given",
  unknown: "the approval token is unknown",
  pending: "the approval token has not been approved yet",
  rejected: "the approval token was rejected",
  expired: "the approval token has expired",
  used: "the approval token has already been used",
  agent: "the approval token was issued for another agent",
  action: "the approval token was issued for another action",
  arguments: "the approval token was issued for other arguments",
  definition: "the approval token was issued for another definition of the tool",
  decided: "the approval token has already been decided"
}

/** The message of a refusal by `check`. */
export const describeCheck = (check: ApprovalCheck): string => checkMessages[check]

const refusal = (check: ApprovalCheck, message = checkMessages[check]): Effect.Effect<never, ApprovalTokenError> =>
  Effect.fail(new ApprovalTokenError({ check, message }))

/** Which binding check, if any, refuses `binding` for a token bound to `bound`. */
const bindingCheck = (bound: Binding, binding: Binding): ApprovalCheck | undefined => {
  if (bound.agentId !== binding.agentId) return "agent"
  if (bound.action !== binding.action || (bound.tool ?? "") !== (binding.tool ?? "")) return "action"
  if (bound.argumentsDigest !== binding.argumentsDigest) return "arguments"
  if ((bound.definitionDigest ?? "") !== (binding.definitionDigest ?? "")) return "definition"
  return undefined
}

/**
 * Which check, if any, refuses consuming `token` for `binding` at `now` by a call whose idempotency key
 * has the digest `key`: a token that call used already is that call's, run again.
 */
const consumeCheck = (
  token: Token | undefined,
  binding: Binding,
  now: number,
  key: string | undefined
): ApprovalCheck | undefined => {
  if (token === undefined) return "unknown"
  const mismatch = bindingCheck(token.binding, binding)
  if (mismatch !== undefined) return mismatch
  if (token.status === "rejected") return "rejected"
  if (token.status === "used") return key !== undefined && token.usedKey === key ? undefined : "used"
  if (now >= token.expiresAt) return "expired"
  if (token.status === "pending") return "pending"
  return undefined
}

/** The decision recorded on a token, if it was decided (a used token was approved). */
const recorded = (token: Token): Decision.Decision | undefined => {
  switch (token.status) {
    case "pending":
      return undefined
    case "rejected":
      return Decision.reject(token.approver ?? "", token.rejection ?? "")
    default:
      return Decision.approve(token.approver ?? "")
  }
}

/** The token `decision` makes of a pending token at `now`. */
const decided = (token: Token, decision: Decision.Decision, now: number): Token =>
  decision._tag === "Approve"
    ? { ...token, status: "approved", approver: decision.approver, decidedAt: now }
    : { ...token, status: "rejected", approver: decision.approver, decidedAt: now, rejection: decision.reason }

/** What a request is remembered under: everything the token is bound to and requested with, its scope included. */
const requestKey = (binding: Binding, reason: string, ttl: number, scope: Scope | undefined): string =>
  JSON.stringify([
    binding.agentId,
    binding.action,
    binding.tool ?? null,
    binding.argumentsDigest,
    binding.definitionDigest ?? null,
    reason,
    ttl,
    scope?.turn ?? null,
    scope?.call ?? null
  ])

const requestOf = (key: string) => {
  const [agentId, action, tool, argumentsDigest, definitionDigest, reason, ttl, turn, call] = JSON.parse(key) as [
    string,
    string,
    string | null,
    string,
    string | null,
    string,
    number,
    string | null,
    string | null
  ]
  const binding: Binding = {
    agentId,
    action,
    tool: tool ?? undefined,
    argumentsDigest,
    ...(definitionDigest === null ? {} : { definitionDigest })
  }
  const scope: Scope | undefined = turn === null ? undefined : { turn, ...(call === null ? {} : { call }) }
  return { binding, reason, ttl, scope }
}

/** A token as a decision addresses it: by its id, or by the key a listing gave. */
interface Address {
  readonly find: Effect.Effect<Token | undefined, StoreBoundary.StoreError>
  readonly transition: (from: Token["status"], next: Token) => Effect.Effect<boolean, StoreBoundary.StoreError>
}

/** Records `decision` on the token at `address` (checked against `binding` when given), once. */
const decide = (
  address: Address,
  decision: Decision.Decision,
  binding: Binding | undefined
): Effect.Effect<
  { readonly token: Token; readonly repeated: boolean },
  ApprovalTokenError | StoreBoundary.StoreError
> =>
  Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    for (;;) {
      const token = yield* address.find
      if (token === undefined) return yield* refusal("unknown")
      const mismatch = binding === undefined ? undefined : bindingCheck(token.binding, binding)
      if (mismatch !== undefined) return yield* refusal(mismatch)
      const ruling = Decision.judge(recorded(token), decision)
      if (ruling._tag === "Repeat") return { token, repeated: true }
      if (ruling._tag === "Refuse") return yield* refusal("decided", ruling.message)
      if (now >= token.expiresAt) return yield* refusal("expired")
      const next = decided(token, decision, now)
      if (yield* address.transition("pending", next)) return { token: next, repeated: false }
      // Another decider recorded first: the next look answers as its decision says.
    }
  })

/** `Service.decide`: a decision on the token listed under `key`, through the storage's key access. */
const decideListed = (
  storage: Storage,
  store: string,
  key: string,
  decision: Decision.Decision
): Effect.Effect<Decided, ApprovalTokenError | StoreBoundary.StoreError> =>
  Effect.gen(function* () {
    const { findListed, transitionListed } = storage
    if (findListed === undefined || transitionListed === undefined) {
      return yield* new StoreBoundary.StoreError({
        store,
        category: "EXECUTION",
        message: `${store} cannot decide a listed token (its storage has no findListed and transitionListed)`
      })
    }
    yield* StoreBoundary.checkText(store, [
      { field: "key", text: key },
      { field: "approver", text: decision.approver },
      ...(decision._tag === "Reject"
        ? [{ field: "reason", text: decision.reason, max: StoreBoundary.maxTextLength }]
        : [])
    ])
    const address: Address = { find: findListed(key), transition: (from, next) => transitionListed(key, from, next) }
    const { token, repeated } = yield* decide(address, decision, undefined)
    return { decision: recorded(token) ?? decision, repeated, status: token.status }
  })

/** The most pending tokens one listing gives, and how many by default. */
const maxListed = 1_000
const defaultListed = 100

/** Builds the store's rules on `storage` (see the module doc and `ApprovalStore.make`). */
export const make = (storage: Storage): Service => {
  const store = storage.name ?? "the approval store"
  // A token id no store could have issued (a NUL, a lone surrogate, past the cap) is unknown: it never
  // reaches the storage, so a row is never looked up under a mangled key.
  const find = (tokenId: string): Effect.Effect<Token | undefined, StoreBoundary.StoreError> =>
    StoreBoundary.textProblem(tokenId) === undefined ? storage.find(tokenId) : Effect.succeed(undefined)

  // Ids just minted for a request: answered as they are once, not looked up again.
  const minted = new Set<string>()
  // What a person is shown of the call each key is being minted for (set by its request, read by its mint).
  const shown = new Map<string, Pick<RequestOptions, "agents" | "arguments">>()
  const mint = (key: string): Effect.Effect<string, StoreBoundary.StoreError> =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => {
      const { binding, reason, ttl, scope } = requestOf(key)
      const display = shown.get(key)
      shown.delete(key)
      const id = newTokenId()
      const token: Token = {
        id,
        binding,
        reason,
        status: "pending",
        requestedAt: now,
        expiresAt: now + ttl,
        approver: undefined,
        decidedAt: undefined,
        rejection: undefined,
        usedAt: undefined,
        ...(scope === undefined ? {} : { scope }),
        ...(display?.agents === undefined ? {} : { agents: display.agents }),
        ...(display?.arguments === undefined ? {} : { arguments: display.arguments })
      }
      return Effect.as(
        Effect.tap(storage.insert(token), () => Effect.sync(() => minted.add(id))),
        id
      )
    })
  // The live pending token of each call asked for: Effect's cache runs one lookup for concurrent requests of
  // one key, keeps an entry as long as its token lives, and forgets the least recently used past its capacity.
  const asked = Effect.runSync(
    Cache.makeWith(mint, {
      capacity: remembered,
      timeToLive: (exit, key) => (exit._tag === "Success" ? Duration.millis(requestOf(key).ttl) : Duration.zero)
    })
  )

  const request: Service["request"] = (binding, reason, ttl, options) =>
    Effect.gen(function* () {
      yield* StoreBoundary.checkText(store, [
        { field: "agentId", text: binding.agentId },
        { field: "action", text: binding.action },
        { field: "tool", text: binding.tool },
        { field: "argumentsDigest", text: binding.argumentsDigest },
        { field: "definitionDigest", text: binding.definitionDigest },
        { field: "reason", text: reason, max: StoreBoundary.maxTextLength },
        { field: "scope.turn", text: options?.scope?.turn },
        { field: "scope.call", text: options?.scope?.call },
        ...(options?.agents ?? []).map((agent, i) => ({ field: `agents.${i}`, text: agent })),
        { field: "arguments", text: options?.arguments, max: StoreBoundary.maxTextLength }
      ])
      const lifetime = Duration.toMillis(ttl === undefined ? defaultTtl : Duration.fromInputUnsafe(ttl))
      const key = requestKey(binding, reason, lifetime, options?.scope)
      if (options?.agents !== undefined || options?.arguments !== undefined) {
        shown.set(key, { agents: options.agents, arguments: options.arguments })
      }
      const id = yield* Cache.get(asked, key)
      if (minted.delete(id)) return id
      const token = yield* find(id)
      const now = yield* Clock.currentTimeMillis
      if (token !== undefined && token.status === "pending" && now < token.expiresAt) return id
      // Decided, used or expired since: this call is asked for again with a fresh token.
      yield* Cache.invalidateWhen(asked, key, (cached) => cached === id)
      const fresh = yield* Cache.get(asked, key)
      minted.delete(fresh)
      return fresh
    })

  const byId = (tokenId: string): Address => ({
    find: find(tokenId),
    transition: (from, next) => storage.transition(tokenId, from, next)
  })

  return {
    request,
    approve: (tokenId, approver, binding) =>
      Effect.andThen(
        StoreBoundary.checkText(store, [{ field: "approver", text: approver }]),
        Effect.map(decide(byId(tokenId), Decision.approve(approver), binding), (decided) => decided.token)
      ),
    reject: (tokenId, approver, why, binding) =>
      Effect.andThen(
        StoreBoundary.checkText(store, [
          { field: "approver", text: approver },
          { field: "reason", text: why, max: StoreBoundary.maxTextLength }
        ]),
        Effect.map(decide(byId(tokenId), Decision.reject(approver, why), binding), (decided) => decided.token)
      ),
    consume: (tokenId, binding, options) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const key = options?.key === undefined ? undefined : keyDigest(options.key)
        return Effect.flatMap(find(tokenId), (token) => {
          const check = consumeCheck(token, binding, now, key)
          if (check !== undefined || token === undefined) return refusal(check ?? "unknown")
          // The same call (binding and key) run again: it used this token already.
          if (token.status === "used") return Effect.succeed(token)
          const used: Token = { ...token, status: "used", usedAt: now, ...(key === undefined ? {} : { usedKey: key }) }
          return Effect.flatMap(storage.transition(tokenId, "approved", used), (burnt) =>
            burnt
              ? Effect.succeed(used)
              : // Someone else consumed it first: the same call's other attempt passes, any other is refused.
                Effect.flatMap(find(tokenId), (after) => {
                  const again = consumeCheck(after, binding, now, key)
                  return again === undefined && after !== undefined ? Effect.succeed(after) : refusal(again ?? "used")
                })
          )
        })
      }),
    get: (tokenId) => Effect.map(find(tokenId), Option.fromUndefinedOr),
    decide: (key, decision) => decideListed(storage, store, key, decision),
    list: (options) =>
      Effect.gen(function* () {
        const limit = options?.limit ?? defaultListed
        if (!Number.isInteger(limit) || limit < 1 || limit > maxListed) {
          return yield* new StoreBoundary.StoreError({
            store,
            category: "VALIDATION",
            field: "limit",
            message: `${store}: limit must be an integer from 1 to ${maxListed}, got ${String(limit)}`
          })
        }
        yield* StoreBoundary.checkText(store, [
          { field: "agentId", text: options?.agentId },
          { field: "scope.turn", text: options?.scope?.turn },
          { field: "scope.call", text: options?.scope?.call }
        ])
        const now = yield* Clock.currentTimeMillis
        return yield* storage.list({ agentId: options?.agentId, scope: options?.scope, limit, now })
      })
  }
}
