/**
 * Which browser holds which thread. A thread is issued by the server (`POST /api/thread`): a random id and a
 * random key that only the page that asked gets; the server keeps the key's SHA-256, never the key. Every request
 * on a thread — reading it, a turn, a decision — must carry that key (`x-thread-key`): a thread id alone reads
 * nothing and changes nothing, and a wrong key is answered as an unknown thread (404), so an id's existence does
 * not leak.
 *
 * Bounded: at most `perPage` threads for one page token and `total` in all (429 naming the cap past either), and a
 * thread untouched for `idleMs` is forgotten and deleted from the store.
 */
import { createHash, randomBytes, randomUUID, timingSafeEqual } from "node:crypto"

/** The header a page sends its thread's key in. */
export const keyHeader = "x-thread-key"

/** The default bounds: 20 threads a page, 1,000 in all, forgotten after 30 minutes untouched. */
export const defaults = { perPage: 20, total: 1_000, idleMs: 30 * 60_000 } as const

interface Entry {
  readonly hash: Buffer
  readonly page: string
  lastSeen: number
}

const digest = (text: string): Buffer => createHash("sha256").update(text).digest()

/** The threads of one server. */
export const make = (options?: {
  readonly perPage?: number | undefined
  readonly total?: number | undefined
  readonly idleMs?: number | undefined
  /** Called with each thread forgotten for being idle (delete it from the store). */
  readonly forget?: ((thread: string) => void) | undefined
}) => {
  const perPage = options?.perPage ?? defaults.perPage
  const total = options?.total ?? defaults.total
  const idleMs = options?.idleMs ?? defaults.idleMs
  const entries = new Map<string, Entry>()
  const sweep = (now: number) => {
    for (const [thread, entry] of entries) {
      if (now - entry.lastSeen > idleMs) {
        entries.delete(thread)
        options?.forget?.(thread)
      }
    }
  }
  return {
    /** A new thread for the page that holds `pageToken`, or why not (429). */
    issue: (
      pageToken: string,
      now: number
    ): { readonly thread: string; readonly key: string } | { readonly refused: string } => {
      sweep(now)
      const page = digest(pageToken).toString("hex")
      if (entries.size >= total) return { refused: `the chat holds ${total} threads, its most; try again later` }
      let mine = 0
      for (const entry of entries.values()) if (entry.page === page) mine++
      if (mine >= perPage) return { refused: `this page holds ${perPage} threads, the most a page may` }
      const thread = randomUUID()
      const key = randomBytes(32).toString("base64url")
      entries.set(thread, { hash: digest(key), page, lastSeen: now })
      return { thread, key }
    },
    /** Whether `key` is the key of `thread` (touching it when it is). */
    holds: (thread: string, key: string | undefined, now: number): boolean => {
      sweep(now)
      const entry = entries.get(thread)
      if (entry === undefined || key === undefined) return false
      const ok = timingSafeEqual(entry.hash, digest(key))
      if (ok) entry.lastSeen = now
      return ok
    },
    size: () => entries.size
  }
}

/** The threads of one server. */
export type Threads = ReturnType<typeof make>
