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
