/**
 * Texts cut for messages, excerpts and previews: every cut is bounded and
 * never splits a surrogate pair (half an emoji would be invalid UTF-16).
 */

/** The first `length` characters of `text` (at least 0), one fewer when the last would be half a surrogate pair. */
export const cut = (text: string, length: number): string => {
  const head = text.slice(0, Math.max(0, length))
  return /[\uD800-\uDBFF]$/.test(head) ? head.slice(0, -1) : head
}

/** `text` when it has at most `length` characters, else its first `length - 1` (see {@link cut}) and `…`. */
export const shorten = (text: string, length: number): string =>
  text.length <= length ? text : `${cut(text, length - 1)}…`

/** The last `length` characters of `text` (at least 0), one fewer when the first would be half a surrogate pair. */
export const cutFromEnd = (text: string, length: number): string => {
  const tail = length <= 0 ? "" : text.slice(-length)
  return /^[\uDC00-\uDFFF]/.test(tail) ? tail.slice(1) : tail
}

/**
 * `text` when it has at most `length` characters, else its head and tail around a marker that says how many
 * characters were left out, the whole at most `length` characters (cuts as {@link cut} and {@link cutFromEnd}).
 */
export const keepEnds = (text: string, length: number): string => {
  if (text.length <= length) return text
  // The marker's digits depend on the count it reports: size it for the largest count, text.length.
  const room = Math.max(0, length - `\n[… ${text.length} characters left out …]\n`.length)
  const head = cut(text, Math.ceil(room / 2))
  const tail = cutFromEnd(text, Math.floor(room / 2))
  return `${head}\n[… ${text.length - head.length - tail.length} characters left out …]\n${tail}`
}

// Control (C0, C1), format (bidi controls, zero-width characters, tags), line and paragraph separators, and lone
// surrogates: each could break a line, reorder or hide what a person reads.
const unprintable = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/gu

const escapeOne = (character: string): string => {
  const point = character.codePointAt(0) ?? 0
  return point > 0xffff
    ? `\\u{${point.toString(16).toUpperCase()}}`
    : `\\u${point.toString(16).toUpperCase().padStart(4, "0")}`
}

/** `text` with every character that could forge a line, reorder or hide text written as its `\uXXXX` escape. */
export const printable = (text: string): string => text.replace(unprintable, escapeOne)
