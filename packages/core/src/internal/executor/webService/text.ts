/**
 * A response body as text: its content type (JSON, other text, or bytes),
 * its charset — a byte-order mark wins over the declared one; an unknown
 * label falls back to UTF-8 with a logged warning — and an excerpt of it for
 * a message: at most 1,000 characters, redacted before it is cut, HTML
 * reduced to its `<title>` or its text.
 */
import * as Effect from "effect/Effect"
import type * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import * as Redact from "../../redact.ts"
import { shorten } from "../../text.ts"
import { type Call, targetOf } from "./failure.ts"

/** The most characters of an excerpt. */
export const excerptLength = 1000

/** A content type: its essence (lower case) and its charset parameter. */
export interface MediaType {
  readonly type: string
  readonly charset: string | undefined
}

/** The content type of a `Content-Type` header. */
export const mediaTypeOf = (header: string | undefined): MediaType | undefined => {
  if (header === undefined) return undefined
  const [essence = "", ...parameters] = header.split(";")
  let charset: string | undefined
  for (const parameter of parameters) {
    const at = parameter.indexOf("=")
    if (at >= 0 && parameter.slice(0, at).trim().toLowerCase() === "charset") {
      charset = parameter
        .slice(at + 1)
        .trim()
        .replace(/^"(.*)"$/, "$1")
    }
  }
  return { type: essence.trim().toLowerCase(), charset }
}

/** Whether a content type is JSON (`application/json`, `text/json`, `*+json`). */
export const isJson = (media: MediaType | undefined): boolean =>
  media !== undefined &&
  (media.type === "application/json" || media.type === "text/json" || media.type.endsWith("+json"))

/** Whether a content type is text (text, XML, JavaScript, form data, anything with a charset, or none). */
export const isText = (media: MediaType | undefined): boolean =>
  media === undefined ||
  media.charset !== undefined ||
  media.type.startsWith("text/") ||
  isJson(media) ||
  media.type.endsWith("/xml") ||
  media.type.endsWith("+xml") ||
  media.type.endsWith("/javascript") ||
  media.type === "application/x-www-form-urlencoded"

const isHtml = (media: MediaType | undefined): boolean =>
  media?.type === "text/html" || media?.type === "application/xhtml+xml"

type Decoder = InstanceType<typeof TextDecoder>

const decoders = new Map<string, Decoder>()

// A decoder for a label, or undefined when `TextDecoder` does not know it.
const decoderFor = (label: string): Decoder | undefined => {
  const key = label.trim().toLowerCase()
  const cached = decoders.get(key)
  if (cached !== undefined) return cached
  const made = Result.try(() => new TextDecoder(key))
  if (Result.isFailure(made)) return undefined
  decoders.set(key, made.success)
  return made.success
}

// A byte-order mark names the encoding whatever the header says (WHATWG "decode").
const bomLabel = (bytes: Uint8Array): string | undefined => {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return "utf-8"
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return "utf-16le"
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return "utf-16be"
  return undefined
}

const decodeQuietly = (bytes: Uint8Array, charset: string | undefined): string =>
  (decoderFor(bomLabel(bytes) ?? charset ?? "utf-8") ?? decoderFor("utf-8")!).decode(bytes)

/** The bytes as text, by their byte-order mark, else `charset`, else UTF-8 (an unknown label is logged). */
export const decodeText = (call: Call, bytes: Uint8Array, charset: string | undefined): Effect.Effect<string> => {
  const label = bomLabel(bytes) ?? charset ?? "utf-8"
  const decoder = decoderFor(label)
  if (decoder !== undefined) return Effect.succeed(decoder.decode(bytes))
  return Effect.as(
    Effect.logWarning(
      Redact.text(
        `${call.name}: unknown charset ${JSON.stringify(label)} in the response of ${call.method} ${targetOf(call.url)}; decoding as UTF-8`,
        call.secrets
      )
    ),
    decoderFor("utf-8")!.decode(bytes)
  )
}

/** Runs of white space as one space, trimmed. */
export const collapse = (text: string): string => text.replace(/\s+/g, " ").trim()

const entities: Readonly<Record<string, string>> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  nbsp: " "
}

const decodeEntities = (text: string): string =>
  text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, entity: string) => {
    if (entity.startsWith("#")) {
      const code =
        entity[1] === "x" || entity[1] === "X" ? Number.parseInt(entity.slice(2), 16) : Number(entity.slice(1))
      return Number.isInteger(code) && code >= 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole
    }
    return entities[entity.toLowerCase()] ?? whole
  })

// An HTML page reduced to its title, or to its text when it has none.
const htmlText = (html: string): string => {
  const title = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(html)?.[1]
  if (title !== undefined && collapse(title) !== "") return collapse(decodeEntities(title))
  return collapse(
    decodeEntities(
      html
        .replace(/<!--[\s\S]*?-->/g, " ")
        .replace(/<(script|style)\b[\s\S]*?<\/\1\s*>/gi, " ")
        .replace(/<[^>]*>/g, " ")
    )
  )
}

// The first 64 KiB are plenty for a 1,000-character excerpt.
// Redacted before it is cut, so a secret the cut would split is never left half shown.
export const excerptOf = (
  bytes: Uint8Array,
  media: MediaType | undefined,
  secrets: ReadonlyArray<Redacted.Redacted<string>>
): string => {
  if (bytes.length === 0) return ""
  const text = Redact.text(decodeQuietly(bytes.subarray(0, 65_536), media?.charset), secrets)
  const html = isHtml(media) || /^\s*<(!doctype\s+html|html)[\s>]/i.test(text)
  return shorten(html ? htmlText(text) : collapse(text), excerptLength)
}
