/**
 * The approval store's storage in process memory: a map of tokens, every
 * operation synchronous (so a `transition` is atomic within the process),
 * expired tokens swept once the map has grown past 10,000 (then past twice
 * its size after the last sweep).
 */
import * as Effect from "effect/Effect"
import type { Storage, Token } from "./storage.ts"

/** A fresh storage in process memory (see the module doc). */
export const storage = (): Storage => {
  const tokens = new Map<string, Token>()
  let sweepAt = 10_000
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
      })
  }
}
