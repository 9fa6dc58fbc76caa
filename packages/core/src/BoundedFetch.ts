/**
 * A `fetch` for a provider SDK whose response bodies are capped while they
 * arrive: a reply's size is bounded before it is parsed, so a huge answer is
 * never held whole. A non-streamed body is counted as a whole; a stream of
 * server-sent events event by event (the bytes since the last blank line,
 * `\n\n` or `\r\n\r\n`), so a long stream of small events passes and one
 * huge event does not. Past the cap the read fails with {@link BodyTooLarge}
 * and the request is cancelled. The model layers give it to their SDK
 * clients; a layer of your own over another SDK can do the same.
 *
 * @example
 * ```ts
 * import { BoundedFetch } from "@rolecraft/core"
 *
 * // a reply cap of 200,000 characters: bodies (or one streamed event) up to 3.2 MB
 * const fetch = BoundedFetch.make(globalThis.fetch, BoundedFetch.bodyLimitOf(200_000))
 * ```
 *
 * @since 0.3.0
 */

/**
 * The failure of a body read past its cap: `limit` in bytes, `streamed` when
 * one event of a stream passed it.
 *
 * @category errors
 * @since 0.3.0
 */
export class BodyTooLarge extends Error {
  override readonly name = "BodyTooLarge"
  readonly limit: number
  readonly streamed: boolean
  constructor(limit: number, streamed: boolean) {
    super(
      streamed
        ? `one event of the stream passed ${limit.toLocaleString("en-US")} bytes`
        : `the body passed ${limit.toLocaleString("en-US")} bytes`
    )
    this.limit = limit
    this.streamed = streamed
  }
}

/**
 * Bytes of a body (or of one event) allowed per character of the reply cap:
 * JSON escapes take up to 6.
 *
 * @category constants
 * @since 0.3.0
 */
export const bytesPerCharacter = 16

/**
 * The body cap of a reply cap of `maxReplyCharacters`: {@link bytesPerCharacter}
 * bytes a character, at least 1 MiB.
 *
 * @category constructors
 * @since 0.3.0
 */
export const bodyLimitOf = (maxReplyCharacters: number): number =>
  Math.max(1024 * 1024, bytesPerCharacter * maxReplyCharacters)

const LF = 10
const CR = 13

/**
 * The index just past the last blank line (`\n\n` or `\r\n\r\n`) in `chunk`, whose two bytes before are
 * `before` (`-1` for none); -1 when it has none. Searched from the end, one line ending at a time.
 */
const lastBoundary = (chunk: Uint8Array, before: readonly [number, number]): number => {
  const at = (k: number): number => (k >= 0 ? (chunk[k] as number) : k >= -2 ? (before[2 + k] as number) : -1)
  let p = chunk.lastIndexOf(LF)
  while (p >= 0) {
    let q = p - 1
    if (at(q) === CR) q -= 1
    if (at(q) === LF) return p + 1
    p = p === 0 ? -1 : chunk.lastIndexOf(LF, p - 1)
  }
  return -1
}

/** `body` counted as it is read: past `limit` bytes in all (or in one event, for a stream) it fails. */
const counted = (body: ReadableStream<Uint8Array>, limit: number, streamed: boolean): ReadableStream<Uint8Array> => {
  const reader = body.getReader()
  let size = 0
  let before: readonly [number, number] = [-1, -1]
  // Pulled one read at a time, as the SDK reads: no pipe, no buffering ahead of the reader.
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const { done, value } = await reader.read()
        if (done) {
          controller.close()
          return
        }
        if (streamed) {
          const at = lastBoundary(value, before)
          size = at < 0 ? size + value.length : value.length - at
          const n = value.length
          if (n >= 2) before = [value[n - 2] as number, value[n - 1] as number]
          else if (n === 1) before = [before[1], value[0] as number]
        } else {
          size += value.length
        }
        if (size <= limit) {
          controller.enqueue(value)
          return
        }
        const error = new BodyTooLarge(limit, streamed)
        controller.error(error)
        await reader.cancel(error).catch(() => undefined)
      },
      cancel: (reason) => reader.cancel(reason)
    },
    { highWaterMark: 0 }
  )
}

const bodiless = new Set([101, 204, 205, 304])

/**
 * `fetch` whose response bodies are capped at `limit` bytes (see the module's header). The response is the one
 * `base` gave: a stream's `body` is replaced by its counted form, and a non-streamed body is counted when the SDK
 * reads its `text()` (building a new `Response` around the body costs a stream its first delta's time).
 *
 * @category constructors
 * @since 0.3.0
 */
export const make =
  (base: typeof globalThis.fetch, limit: number): typeof globalThis.fetch =>
  async (input, init) => {
    const response = await base(input, init)
    const body = response.body
    if (body === null || bodiless.has(response.status)) return response
    // A body whose length is declared within the cap cannot pass it (fetch refuses a longer one).
    const length = Number(response.headers.get("content-length") ?? Number.NaN)
    if (Number.isInteger(length) && length >= 0 && length <= limit) return response
    if (response.headers.get("content-type")?.includes("text/event-stream") === true) {
      Object.defineProperty(response, "body", { value: counted(body, limit, true) })
    } else {
      Object.defineProperty(response, "text", { value: () => new Response(counted(body, limit, false)).text() })
    }
    return response
  }
