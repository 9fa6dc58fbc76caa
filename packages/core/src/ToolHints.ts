/**
 * What an MCP server says a tool does, read the way the MCP specification
 * says to read it: `readOnlyHint`, `destructiveHint`, `idempotentHint` and
 * `openWorldHint`, each filled in with the specification's default when the
 * server did not say (`readOnly` and `idempotent` false, `destructive` and
 * `openWorld` true). The hints are offered with each MCP tool
 * (`ActionTool.hints`) and are what an approval policy's `when` can read.
 *
 * Hints come from the server and are not guarantees. A policy may use them to
 * ask for more approvals, never to skip one its author set: an action with
 * `requireApproval` and no `when` asks for every tool, whatever the hints say,
 * and {@link mayDestroy} counts a tool as destructive unless it says
 * `destructiveHint: false` (a `readOnlyHint: true` alone does not lift it).
 *
 * @example
 * ```ts
 * import { Action, ToolHints } from "@rolecraft/core"
 *
 * // One server, one action: only the tools that may destroy something wait for a person.
 * const project = Action.mcpTool({ description: "Project tools", server: "http://127.0.0.1:3001/mcp" }).pipe(
 *   Action.requireApproval({ reason: "Changes the project", when: (tool) => ToolHints.mayDestroy(tool.hints) })
 * )
 * ```
 *
 * @since 0.3.0
 */
import type { ToolAnnotations, ToolDefinition } from "./McpClient.ts"

/**
 * A tool's hints with the MCP specification's defaults filled in.
 *
 * @category models
 * @since 0.3.0
 */
export interface Hints {
  readonly readOnly: boolean
  readonly destructive: boolean
  readonly idempotent: boolean
  readonly openWorld: boolean
}

/**
 * The hints of a tool that lists none: the MCP specification's defaults.
 *
 * @category constants
 * @since 0.3.0
 */
export const defaults: Hints = { readOnly: false, destructive: true, idempotent: false, openWorld: true }

/**
 * The hints of a tool's annotations, each absent (or not a boolean) one
 * taken from {@link defaults}.
 *
 * @category constructors
 * @since 0.3.0
 */
export const of = (annotations: ToolAnnotations | undefined): Hints => {
  if (annotations === undefined) return defaults
  const flag = (value: unknown, otherwise: boolean) => (typeof value === "boolean" ? value : otherwise)
  return {
    readOnly: flag(annotations.readOnlyHint, defaults.readOnly),
    destructive: flag(annotations.destructiveHint, defaults.destructive),
    idempotent: flag(annotations.idempotentHint, defaults.idempotent),
    openWorld: flag(annotations.openWorldHint, defaults.openWorld)
  }
}

/**
 * Whether a tool may destroy something: `true` unless it says
 * `destructiveHint: false`. The tighter reading of the specification (which
 * makes `destructiveHint` meaningful only when `readOnlyHint` is false): a
 * server that claims `readOnlyHint: true` without `destructiveHint: false`
 * still counts as destructive.
 *
 * @category predicates
 * @since 0.3.0
 */
export const mayDestroy = (hints: Hints): boolean => hints.destructive

/**
 * A tool as an approval policy's `when` reads it: the server's definition as
 * it is listed now (name, title, description, input schema, annotations)
 * with its {@link Hints}, and the mcpTool action (or `mcpServers` key) that
 * offers it.
 *
 * @category models
 * @since 0.3.0
 */
export interface Listing extends ToolDefinition {
  readonly action: string
  readonly hints: Hints
}

/**
 * The listing of `definition` offered by `action`.
 *
 * @category constructors
 * @since 0.3.0
 */
export const listing = (action: string, definition: ToolDefinition): Listing => ({
  ...definition,
  action,
  hints: of(definition.annotations)
})
