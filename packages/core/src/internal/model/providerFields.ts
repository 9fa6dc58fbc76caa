/**
 * What a provider attached to a tool call (`Prompt.ProviderFields`), read as
 * untrusted: an object with a string `origin` and an object of `fields`, or
 * nothing. Fragments of one streamed call join their fields.
 */
import type { ProviderFields } from "../../Prompt.ts"

const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

/** `raw` as provider fields, or `undefined` when it is not one (or has no field). */
export const providerFieldsOf = (raw: unknown): ProviderFields | undefined => {
  if (!isRecord(raw) || typeof raw.origin !== "string" || raw.origin === "" || !isRecord(raw.fields)) return undefined
  if (Object.keys(raw.fields).length === 0) return undefined
  return { origin: raw.origin, fields: raw.fields as ProviderFields["fields"] }
}

/** The fields of one call after another fragment's: its own fields replace the known ones of the same name. */
export const joinFields = (known: ProviderFields | undefined, next: ProviderFields): ProviderFields =>
  known === undefined || known.origin !== next.origin
    ? next
    : { origin: next.origin, fields: { ...known.fields, ...next.fields } }
