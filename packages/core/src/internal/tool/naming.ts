/**
 * The names a model calls tools by: each key (an action name, or `<action>/<tool>` for an MCP server's tool)
 * made valid for the provider APIs (`^[a-zA-Z0-9_-]{1,64}$`) and unique among the keys offered together,
 * the same whatever their order. Refuses nothing: keys whose names still clash after every round (repeated
 * 32-bit hash collisions) are reported, and the toolkit leaves them out.
 */

const maxNameLength = 64
const hashLength = 8

/**
 * A short stable hash of a string: FNV-1a (32 bits) of its UTF-8 bytes, as
 * 8 lowercase hex digits. Stable across runs and platforms (no `node:crypto`).
 */
const hash = (text: string): string => {
  let h = 0x811c9dc5
  for (const byte of new TextEncoder().encode(text)) {
    h = Math.imul(h ^ byte, 0x01000193) >>> 0
  }
  return h.toString(16).padStart(hashLength, "0")
}

const sanitise = (key: string): string => key.replace(/[^a-zA-Z0-9_-]/gu, "_")

// Later rounds put the round number first: FNV keeps a collision of two
// strings when the same suffix is appended to both.
const withHash = (key: string, round: number): string =>
  `${sanitise(key).slice(0, maxNameLength - hashLength - 1)}_${hash(round === 0 ? key : `${round}#${key}`)}`

/**
 * The model-facing name of a key before collisions are resolved: every
 * character outside `[a-zA-Z0-9_-]` (dots, slashes, spaces, non-ASCII; one per
 * code point) becomes `_`; a result longer than 64 characters keeps its first
 * 55 and gets `_` plus an 8-hex-digit hash of the original key.
 * An empty key gives `""`, which the toolkit excludes.
 *
 * For example:
 * ```
 * modelName("calendar.respondToEvent") // "calendar_respondToEvent"
 * modelName("user-profile/update") // "user-profile_update"
 * ```
 */
export const modelName = (key: string): string => {
  const name = sanitise(key)
  return name.length > maxNameLength ? withHash(key, 0) : name
}

// Gives distinct keys distinct names, independently of their order: a key that
// is its own name keeps it; every other key in a clash takes its hash suffix,
// and later rounds re-hash with a round number until no clash is left.
const groupByName = (names: ReadonlyMap<string, string>): ReadonlyArray<readonly [string, ReadonlyArray<string>]> => {
  const holders = new Map<string, Array<string>>()
  for (const [key, name] of names) holders.set(name, [...(holders.get(name) ?? []), key])
  return [...holders].filter(([, group]) => group.length > 1)
}

const assignNames = (keys: ReadonlyArray<string>): Map<string, string> => {
  const names = new Map(keys.map((key) => [key, modelName(key)]))
  const rounds = new Map(keys.map((key) => [key, 0]))
  for (let pass = 0; pass < 16; pass++) {
    const clashes = groupByName(names)
    if (clashes.length === 0) break
    for (const [name, group] of clashes) {
      for (const key of group) {
        if (key === name) continue
        const hashed = names.get(key) !== sanitise(key)
        const round = hashed ? (rounds.get(key) ?? 0) + 1 : 0
        rounds.set(key, round)
        names.set(key, withHash(key, round))
      }
    }
  }
  return names
}

// Keys whose names still clash after the rounds of `assignNames` (in practice
// never: it takes repeated 32-bit hash collisions).
const clashing = (names: ReadonlyMap<string, string>): ReadonlySet<string> =>
  new Set(groupByName(names).flatMap(([, group]) => group))

/**
 * The names of keys offered together: `names` maps each key to its name, valid and unique except for the
 * keys in `clashing`. A clash after mapping (`a.b` and `a_b`, two long keys with the same 55-character
 * prefix, `srv-a/send_email` vs `srv-a.send_email`) is resolved the same way whatever the keys' order: a key
 * that is already a valid name keeps it, the others get an 8-hex-digit hash of their original key.
 */
export const assign = (
  keys: ReadonlyArray<string>
): { readonly names: ReadonlyMap<string, string>; readonly clashing: ReadonlySet<string> } => {
  const names = assignNames(keys)
  return { names, clashing: clashing(names) }
}
