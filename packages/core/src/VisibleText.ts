/**
 * Text a person can read as a model reads it: the characters a person
 * cannot see, which a model reads all the same, found and removed (or shown).
 * What an MCP server supplies for a model to read — tool descriptions and
 * titles, the descriptions and titles inside input schemas, server
 * instructions — passes through {@link sanitise} before a model is offered
 * it; a tool result's text passes through {@link reveal}, which keeps the
 * characters but writes each one visibly (`\u{E0049}`), so the data is not
 * changed and nothing is hidden.
 *
 * Which characters: every character of Unicode's format category (Cf) —
 * the tag block U+E0000–E007F, bidirectional embeddings, overrides and
 * isolates (U+202A–202E, U+2066–2069), marks (U+200E, U+200F, U+061C),
 * zero-width spaces and joiners, the word joiner and invisible operators,
 * the byte order mark, the soft hyphen, interlinear annotation marks — the
 * Hangul fillers, and a run of variation selectors past the first after a
 * character. Real text keeps what its script needs:
 *
 * - a zero-width joiner or non-joiner between two emoji, or between two
 *   letters or marks of a script that joins (emoji sequences, Persian,
 *   Arabic, the Indic scripts; not Latin, Greek or Cyrillic);
 * - a zero-width space between two letters of a script written without
 *   spaces (Thai, Lao, Khmer, Myanmar, Tibetan);
 * - an emoji tag sequence (U+1F3F4, two to seven tag letters or digits,
 *   U+E007F: the flags of England, Scotland, Wales);
 * - the format characters that are drawn (the Arabic number signs
 *   U+0600–0605, U+06DD, U+0890–0891, U+08E2, Syriac U+070F, Kaithi
 *   U+110BD, U+110CD);
 * - one variation selector after a character (an emoji's U+FE0F).
 *
 * @example
 * ```ts
 * import { VisibleText } from "@rolecraft/core"
 *
 * const { text, removed } = VisibleText.sanitise("Read a note.\u{E0049}\u{E0067}\u200B")
 * // text: "Read a note.", removed: [0xe0049, 0xe0067, 0x200b]
 * VisibleText.reveal("ok\u202Eevil") // "ok\\u{202E}evil"
 * ```
 *
 * @since 0.3.0
 */

/** Any character that may be hidden: the fast test before a text is walked. */
const suspect = /[\p{Cf}\u115F\u1160\u3164\uFFA0\u{E0000}-\u{E007F}]|[\u{E0100}-\u{E01EF}]|[\uFE00-\uFE0F]/u

// Joiners join emoji, and the letters and marks of scripts that shape by joining (Arabic, Syriac, the Indic
// scripts, …); between Latin, Greek or Cyrillic letters no script needs one, so there they are removed.
const emoji = /^(?:[\p{Extended_Pictographic}\p{Emoji_Modifier}]|\uFE0F)$/u
const joiningLetter = /^(?![\p{Script=Latin}\p{Script=Greek}\p{Script=Cyrillic}\p{Script=Common}])[\p{L}\p{M}]$/u
const joiningMark =
  /^(?![\p{Script=Latin}\p{Script=Greek}\p{Script=Cyrillic}\p{Script=Common}\p{Script=Inherited}])\p{M}$/u
const joinable = { test: (character: string) => emoji.test(character) || joiningLetter.test(character) }
const joinsTo = {
  test: (character: string) => /^\p{Extended_Pictographic}$/u.test(character) || joiningLetter.test(character)
}
const spaceless = /[\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}\p{Script=Tibetan}]/u
const variation = /[\u{E0100}-\u{E01EF}]|[\uFE00-\uFE0F]/u

// Format characters that are drawn as a sign of their own.
const drawn = new Set([
  0x0600, 0x0601, 0x0602, 0x0603, 0x0604, 0x0605, 0x06dd, 0x070f, 0x0890, 0x0891, 0x08e2, 0x110bd, 0x110cd
])

const blackFlag = 0x1f3f4
const cancelTag = 0xe007f
const isTagLetter = (code: number) => (code >= 0xe0030 && code <= 0xe0039) || (code >= 0xe0061 && code <= 0xe007a)

/** How many characters from `at` make an emoji tag sequence (after U+1F3F4), or 0. */
const tagSequence = (characters: ReadonlyArray<string>, at: number): number => {
  let end = at
  while (end < characters.length && isTagLetter(characters[end]!.codePointAt(0)!)) end++
  const letters = end - at
  return letters >= 2 && letters <= 7 && characters[end]?.codePointAt(0) === cancelTag ? letters + 1 : 0
}

/**
 * Walks `text`, keeping what real text needs and handing every hidden
 * character to `hidden` (which says what to write instead).
 */
const walk = (
  text: string,
  hidden: (character: string) => string
): { readonly text: string; readonly removed: ReadonlyArray<number> } => {
  if (!suspect.test(text)) return { text, removed: [] }
  const characters = Array.from(text)
  const out: Array<string> = []
  const removed: Array<number> = []
  // The last character written that is real text (not replaced), for the joiners' and selectors' context.
  let previous: string | undefined
  for (let i = 0; i < characters.length; i++) {
    const character = characters[i]!
    const code = character.codePointAt(0)!
    if (code === blackFlag) {
      const tags = tagSequence(characters, i + 1)
      out.push(...characters.slice(i, i + 1 + tags))
      previous = characters[i + tags]
      i += tags
      continue
    }
    if (!suspect.test(character)) {
      out.push(character)
      previous = character
      continue
    }
    const next = characters[i + 1]
    const keep =
      drawn.has(code) ||
      ((code === 0x200c || code === 0x200d) &&
        previous !== undefined &&
        joinable.test(previous) &&
        ((next !== undefined && joinsTo.test(next)) ||
          // After a virama at a word's end (the Malayalam chillu's old spelling, the Sinhala touching letters).
          (joiningMark.test(previous) && (next === undefined || !suspect.test(next))))) ||
      (code === 0x200b &&
        previous !== undefined &&
        spaceless.test(previous) &&
        next !== undefined &&
        spaceless.test(next)) ||
      (variation.test(character) && previous !== undefined && !variation.test(previous) && !suspect.test(previous))
    if (keep) {
      out.push(character)
      previous = character
    } else {
      removed.push(code)
      out.push(hidden(character))
    }
  }
  return removed.length === 0 ? { text, removed } : { text: out.join(""), removed }
}

/**
 * `text` without the characters a person cannot see (see the module doc),
 * and the code points removed, in order (empty when nothing was: the text
 * is then returned as it is).
 *
 * @category constructors
 * @since 0.3.0
 */
export const sanitise = (text: string): { readonly text: string; readonly removed: ReadonlyArray<number> } =>
  walk(text, () => "")

/**
 * `text` with each character a person cannot see (see the module doc)
 * written as its escape, `\u{XXXX}`, so a person and a model read the same
 * thing; real text is kept as it is.
 *
 * @category constructors
 * @since 0.3.0
 */
export const reveal = (text: string): string =>
  walk(text, (character) => `\\u{${character.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}}`).text

/**
 * A code point as `U+XXXX`, the way events name the characters removed.
 *
 * @category getters
 * @since 0.3.0
 */
export const codePointName = (code: number): string => `U+${code.toString(16).toUpperCase().padStart(4, "0")}`
