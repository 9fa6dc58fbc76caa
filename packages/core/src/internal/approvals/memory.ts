/**
 * The approval store's storage in process memory: a map of tokens, every
 * operation synchronous (so a `transition` is atomic within the process),
 * expired tokens swept once the map has grown past 10,000 (then past twice
 * its size after the last sweep).
 */
import * as Effect from "effect/Effect"
import { keyOf, pendingOf } from "./row.ts"
import type { ListQuery, PendingToken, Storage, Token } from "./storage.ts"

/** Whether `token` is listed by `query`: pending, unexpired, of its agent and scope when given. */
export const listed = (token: Token, query: ListQuery): boolean =>
  token.status === "pending" &&
  query.now < token.expiresAt &&
  (query.agentId === undefined || token.binding.agentId === query.agentId) &&
  (query.scope === undefined ||
    (token.scope?.turn === query.scope.turn &&
      (query.scope.call === undefined || token.scope.call === query.scope.call)))

/** A fresh storage in process memory (see the module doc). */
export const storage = (): Storage => {
  const tokens = new Map<string, Token>()
  let sweepAt = 10_000
  // A listed token is found by its key: the map is scanned (deciding from a listing is rare, a person's pace).
  const tokenOf = (key: string): Token | undefined => {
    for (const token of tokens.values()) if (keyOf(token.id) === key) return token
    return undefined
  }
  const sweep = (now: number) => {
    for (const [id, token] of tokens) if (now >= token.expiresAt) tokens.delete(id)
    sweepAt = Math.max(10_000, tokens.size * 2)
  }
  return {
    name: "the approval store (memory)",
    insert: (token) =>
      Effect.sync(() => {
        if (tokens.size >= sweepAt) sweep(token.requestedAt)
        tokens.set(token.id, token)
      }),
    find: (tokenId) => Effect.sync(() => tokens.get(tokenId)),
    transition: (tokenId, from, next) =>
      Effect.sync(() => {
        if (tokens.get(tokenId)?.status !== from) return false
        tokens.set(tokenId, next)
        return true
      }),
    findListed: (key) => Effect.sync(() => tokenOf(key)),
    transitionListed: (key, from, next) =>
      Effect.sync(() => {
        const token = tokenOf(key)
        if (token === undefined || token.status !== from) return false
        tokens.set(token.id, { ...next, id: token.id })
        return true
      }),
    list: (query) =>
      Effect.sync(() => {
        const found: Array<PendingToken> = []
        for (const token of tokens.values()) if (listed(token, query)) found.push(pendingOf(keyOf(token.id), token))
        found.sort((a, b) => a.requestedAt - b.requestedAt || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
        return found.slice(0, query.limit)
      })
  }
}
