/**
 * The thread store's storage in process memory: a map of threads, each with its exchanges in an array by number and its own semaphore (Effect's
 * `Semaphore`, one permit) that a turn holds while it runs. A second turn on the same thread waits for the permit
 * up to its `wait`, then fails TRANSIENT; turns on other threads never wait. A turn's writes are kept aside and
 * applied when it succeeds, so a failed or interrupted turn leaves the thread as it was.
 */
import * as Effect from "effect/Effect"
import * as Semaphore from "effect/Semaphore"
import * as StoreBoundary from "../../StoreBoundary.ts"
import { busyMessage, type ExchangeRow, type HeadRow, type Reader, type Storage, type Writer } from "./storage.ts"

/** How the store names itself in messages. */
export const name = "the thread store (memory)"

interface Entry {
  readonly lock: Semaphore.Semaphore
  /** Turns holding or waiting for the thread: an entry with none and no data is let go. */
  users: number
  head: HeadRow | undefined
  /** Exchange `n` at index `n - 1` (numbers start at 1 and follow each other). */
  exchanges: ReadonlyArray<ExchangeRow | undefined>
}

const readerOf = (
  head: () => HeadRow | undefined,
  exchanges: () => ReadonlyArray<ExchangeRow | undefined>
): Reader => ({
  head: Effect.sync(head),
  index: Effect.sync(() => {
    const rows: Array<{ readonly seq: number; readonly tokens: number; readonly call_ids: string }> = []
    for (const row of exchanges())
      if (row !== undefined) rows.push({ seq: row.seq, tokens: row.tokens, call_ids: row.call_ids })
    return rows
  }),
  exchanges: (from, to) =>
    Effect.sync(() =>
      exchanges()
        .slice(Math.max(from, 1) - 1, Math.max(to, 0))
        .filter((row) => row !== undefined)
    )
})

/** A fresh storage in process memory (see the module doc). */
export const storage = (): Storage => {
  const threads = new Map<string, Entry>()

  const enter = (threadId: string): Entry => {
    let entry = threads.get(threadId)
    if (entry === undefined) {
      entry = { lock: Semaphore.makeUnsafe(1), users: 0, head: undefined, exchanges: [] }
      threads.set(threadId, entry)
    }
    entry.users++
    return entry
  }
  const leave = (threadId: string, entry: Entry) =>
    Effect.sync(() => {
      entry.users--
      if (entry.users === 0 && entry.head === undefined && threads.get(threadId) === entry) threads.delete(threadId)
    })

  /** The thread's writer for one turn: its writes kept aside, and the effect that applies them. */
  const turnOf = (entry: Entry) => {
    let head: HeadRow | undefined = entry.head
    let cleared = false
    const written = new Map<number, ExchangeRow>()
    const view = () => {
      if (written.size === 0 && !cleared) return entry.exchanges
      const merged = cleared ? [] : [...entry.exchanges]
      for (const [seq, row] of written) merged[seq - 1] = row
      return merged
    }
    const writer: Writer = {
      ...readerOf(() => head, view),
      putExchange: (row) => Effect.sync(() => void written.set(row.seq, row)),
      putHead: (row) =>
        Effect.sync(() => {
          head = row
        }),
      clear: Effect.sync(() => {
        cleared = true
        head = undefined
        written.clear()
      })
    }
    const apply = Effect.sync(() => {
      const exchanges = (cleared ? [] : entry.exchanges) as Array<ExchangeRow | undefined>
      for (const [seq, row] of written) exchanges[seq - 1] = row
      entry.exchanges = exchanges
      entry.head = head
    })
    return { writer, apply }
  }

  // Waiting for the thread can be interrupted; the writes are applied only when the body succeeds.
  const hold: Storage["hold"] = (threadId, wait, body) =>
    Effect.uninterruptibleMask((restore) => {
      const entry = enter(threadId)
      const taken = entry.lock.take(1).pipe(
        Effect.timeoutOrElse({
          duration: wait,
          orElse: () =>
            Effect.fail(
              new StoreBoundary.StoreError({
                store: name,
                category: "TRANSIENT",
                message: busyMessage(name, threadId, wait)
              })
            )
        })
      )
      return restore(taken).pipe(
        Effect.flatMap(() => {
          const turn = turnOf(entry)
          return restore(Effect.tap(body(turn.writer), () => turn.apply)).pipe(Effect.ensuring(entry.lock.release(1)))
        }),
        Effect.ensuring(leave(threadId, entry))
      )
    })

  return {
    name,
    hold,
    read: (threadId, body) =>
      body(
        readerOf(
          () => threads.get(threadId)?.head,
          () => threads.get(threadId)?.exchanges ?? []
        )
      )
  }
}
