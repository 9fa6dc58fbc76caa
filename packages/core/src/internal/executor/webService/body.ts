/**
 * Reading a response's body: at most a cap of it, as it streams (an error
 * body: 64 KiB, then it stops quietly; a success: `maxResponseBytes`, and
 * EXECUTION past it), then its content encoding undone (gzip, deflate, br),
 * the decoded bytes held to the same cap.
 */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as Zlib from "node:zlib"
import { type ActionError, ExecutionFailure } from "../../../ActionError.ts"
import { type Call, connectionFailure, targetOf, tooLarge } from "./failure.ts"

// How much of an error body is read: its excerpt needs no more.
const errorBodyBytes = 65_536

/**
 * Reads at most a cap of a body as it streams (an error body: 64 KiB, then stops quietly; a success:
 * `maxResponseBytes`, EXECUTION past it), then undoes its content encoding, counting the decoded bytes
 * against the same cap.
 */
export const readBody = (
  call: Call,
  response: HttpClientResponse.HttpClientResponse,
  success: boolean
): Effect.Effect<Uint8Array, ActionError> => {
  const limit = success ? call.action.maxResponseBytes : errorBodyBytes
  const declared = Number(response.headers["content-length"])
  if (success && Number.isFinite(declared) && declared > limit) {
    return Effect.fail(tooLarge(call, `a Content-Length of ${declared} bytes`))
  }
  // A declared length within the cap, not content-encoded, is read whole: an HTTP client stops at the declared
  // length, and one read costs less than a stream of chunks (the success path of nearly every JSON API).
  // An encoded body streams: a client that decodes it itself (fetch) could hand back more than was declared.
  const encoding = response.headers["content-encoding"]
  if (Number.isFinite(declared) && declared <= limit && (encoding === undefined || encoding === "identity")) {
    return Effect.matchEffect(response.arrayBuffer, {
      onFailure: (error) =>
        error.reason._tag === "EmptyBodyError"
          ? Effect.succeed(new Uint8Array(0))
          : Effect.fail(connectionFailure(call, error.reason.cause)),
      // A client that does not frame by the declared length (an in-process one) is still held to the cap.
      onSuccess: (buffer) =>
        buffer.byteLength <= limit
          ? Effect.succeed(new Uint8Array(buffer))
          : success
            ? Effect.fail(tooLarge(call, "a body that went on"))
            : Effect.succeed(new Uint8Array(buffer, 0, limit))
    })
  }
  const chunks: Array<Uint8Array> = []
  let size = 0
  let over = false
  const read = response.stream.pipe(
    Stream.takeWhile((chunk) => {
      if (size + chunk.length > limit) {
        over = true
        chunks.push(chunk.subarray(0, limit - size))
        size = limit
        return false
      }
      chunks.push(chunk)
      size += chunk.length
      return true
    }),
    Stream.runDrain
  )
  return Effect.matchEffect(read, {
    // A response without a body (a 204, or a client's bodiless response) streams as an empty-body error.
    onFailure: (error) =>
      error.reason._tag === "EmptyBodyError"
        ? Effect.succeed(new Uint8Array(0))
        : Effect.fail(connectionFailure(call, error.reason.cause)),
    onSuccess: () => {
      if (over && success) return Effect.fail(tooLarge(call, "a body that went on"))
      const bytes = new Uint8Array(Buffer.concat(chunks, size))
      return decodeContent(call, response.headers["content-encoding"], bytes, limit, success)
    }
  })
}

const gzipMagic = (bytes: Uint8Array) => bytes[0] === 0x1f && bytes[1] === 0x8b
const zlibMagic = (bytes: Uint8Array) =>
  bytes[0] !== undefined && bytes[1] !== undefined && (bytes[0] & 0x0f) === 8 && ((bytes[0] << 8) | bytes[1]) % 31 === 0

/**
 * The body with its content encoding undone. Some clients (fetch) decode bodies themselves and keep the
 * header: bytes without the encoding's own signature are taken as already decoded.
 */
const decodeContent = (
  call: Call,
  header: string | undefined,
  bytes: Uint8Array,
  limit: number,
  success: boolean
): Effect.Effect<Uint8Array, ActionError> => {
  const encoding = (header ?? "").trim().toLowerCase()
  if (encoding === "" || encoding === "identity" || bytes.length === 0) return Effect.succeed(bytes)
  const fail = (why: string) =>
    new ExecutionFailure({
      action: call.name,
      message: `${call.name}: ${call.method} ${targetOf(call.url)} answered a ${encoding} body that ${why}`
    })
  // An error body may have been cut short: decode what there is, for its excerpt.
  const options = success
    ? { maxOutputLength: limit }
    : { maxOutputLength: limit, finishFlush: Zlib.constants.Z_SYNC_FLUSH }
  const inflate = (run: (done: (error: Error | null, out: Buffer) => void) => void) =>
    Effect.callback<Uint8Array, ActionError>((resume) => {
      run((error, out) => {
        if (error === null) return resume(Effect.succeed(new Uint8Array(out.buffer, out.byteOffset, out.length)))
        if (error instanceof RangeError || /maxOutputLength|larger than/i.test(error.message)) {
          return resume(
            Effect.fail(success ? tooLarge(call, `a ${encoding} body that decodes to more`) : fail("is too large"))
          )
        }
        return resume(Effect.fail(fail(`cannot be decoded (${error.message})`)))
      })
    })
  switch (encoding) {
    case "gzip":
    case "x-gzip":
      return gzipMagic(bytes) ? inflate((done) => Zlib.gunzip(bytes, options, done)) : Effect.succeed(bytes)
    case "deflate":
      return zlibMagic(bytes) ? inflate((done) => Zlib.inflate(bytes, options, done)) : Effect.succeed(bytes)
    case "br":
      // Brotli has no signature: bytes that do not decode as brotli are taken as already decoded.
      return Effect.catch(
        inflate((done) => Zlib.brotliDecompress(bytes, { maxOutputLength: limit }, done)),
        (error) =>
          error.message.includes("allowed") || error.message.includes("too large")
            ? Effect.fail(error)
            : Effect.succeed(bytes)
      )
    default:
      return Effect.fail(fail("cannot be decoded (gzip, deflate and br can)"))
  }
}
