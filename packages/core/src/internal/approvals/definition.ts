/**
 * The digest an approval of an MCP tool is bound to: the SHA-256 of the tool's definition as listed (name,
 * title, description, input and output schema, annotations, in canonical JSON), followed by a short digest
 * per part so that a refusal can say which parts changed. Two listings of the same definition give the same
 * text; any change to a part gives another.
 */
import * as ApprovalStore from "../../ApprovalStore.ts"
import type * as Effect from "effect/Effect"
import type { ActionError } from "../../ActionError.ts"
import type { ToolDefinition } from "../../McpClient.ts"

/** The parts of a definition a digest tells apart, in the order a change names them. */
const parts = ["name", "title", "description", "inputSchema", "outputSchema", "annotations"] as const

type Part = (typeof parts)[number]

const partOf = (definition: ToolDefinition, part: Part): unknown => definition[part] ?? null

const sha256 = (value: unknown): string =>
  process.getBuiltinModule("node:crypto").hash("sha256", ApprovalStore.canonicalJson(value), "hex")

// A listing is cached by its connection, so each definition is digested once.
const digests = new WeakMap<ToolDefinition, string>()

/** The digest of a tool's definition (see the module doc). */
export const digest = (definition: ToolDefinition): string => {
  const known = digests.get(definition)
  if (known !== undefined) return known
  const whole = sha256(Object.fromEntries(parts.map((part) => [part, partOf(definition, part)])))
  const each = parts.map((part) => `${part}:${sha256(partOf(definition, part)).slice(0, 16)}`)
  const made = [`sha256:${whole}`, ...each].join(";")
  digests.set(definition, made)
  return made
}

/**
 * The parts (by name: `description`, `input schema`, …) whose digests differ between two digests made by
 * {@link digest}; every part when either is not such a digest.
 */
export const changes = (before: string, after: string): ReadonlyArray<string> => {
  const read = (text: string) => new Map(text.split(";").map((field) => field.split(":", 2) as [string, string]))
  const was = read(before)
  const now = read(after)
  return parts
    .filter((part) => was.get(part) === undefined || was.get(part) !== now.get(part))
    .map((part) => words[part])
}

const words: Record<Part, string> = {
  name: "name",
  title: "title",
  description: "description",
  inputSchema: "input schema",
  outputSchema: "output schema",
  annotations: "annotations"
}

/**
 * How the approval step reads an MCP tool's definition: `find(tool, refresh)` is the tool as the server
 * lists it (afresh with `refresh`), `undefined` when it is not listed; `changed` publishes that a call's tool
 * changed since its approval was asked.
 */
export interface Definition {
  readonly find: (tool: string, refresh: boolean) => Effect.Effect<ToolDefinition | undefined, ActionError>
  readonly changed: (tool: string, changed: ReadonlyArray<string>, message: string) => Effect.Effect<void>
}
