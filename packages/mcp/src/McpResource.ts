/**
 * Resources an MCP server serves (`resources/list`, `resources/read`,
 * `resources/templates/list`, `resources/subscribe`): fixed resources with
 * a URI, resource templates whose URI has `{variables}` (RFC 6570), and
 * the documents of a role's knowledge sources. Give them to `Mcp.serve`
 * as `resources`; a role's knowledge is served on its own.
 *
 * @example
 * ```ts
 * import { McpResource } from "@rolecraft/mcp"
 *
 * const policy = McpResource.make({
 *   uri: "docs://policy",
 *   name: "policy",
 *   mimeType: "text/markdown",
 *   read: () => "# Refunds\nWithin 30 days."
 * })
 * const order = McpResource.template({
 *   uriTemplate: "orders://{id}",
 *   name: "order",
 *   variables: { id: ["A-1", "A-2"] },
 *   read: ({ id }) => JSON.stringify({ id, status: "shipped" })
 * })
 * ```
 *
 * @since 0.2.0
 */
import type * as Effect from "effect/Effect"

/**
 * What reading a resource gives: text, bytes (sent base64 as a `blob`), or
 * an Effect of either. A failure is sent to the client as a JSON-RPC error
 * naming the URI.
 *
 * @category models
 * @since 0.2.0
 */
export type Body = string | Uint8Array | Effect.Effect<string | Uint8Array, unknown>

/**
 * A resource with a fixed URI.
 *
 * @category models
 * @since 0.2.0
 */
export interface Resource {
  readonly _tag: "Resource"
  readonly uri: string
  readonly name: string
  readonly title?: string | undefined
  readonly description?: string | undefined
  readonly mimeType?: string | undefined
  readonly read: () => Body
}

/**
 * A family of resources: `uriTemplate` with `{variable}` parts (RFC 6570,
 * e.g. `"orders://{id}"`), read with the variables a URI matched.
 * `variables` lists, for a variable with a fixed set of values, those
 * values: `completion/complete` offers the ones that start with what the
 * client typed.
 *
 * @category models
 * @since 0.2.0
 */
export interface Template {
  readonly _tag: "Template"
  readonly uriTemplate: string
  readonly name: string
  readonly title?: string | undefined
  readonly description?: string | undefined
  readonly mimeType?: string | undefined
  readonly variables?: Readonly<Record<string, ReadonlyArray<string>>> | undefined
  readonly read: (variables: Readonly<Record<string, string>>, uri: string) => Body
}

/**
 * A resource or a template.
 *
 * @category models
 * @since 0.2.0
 */
export type Any = Resource | Template

/**
 * A resource with a fixed URI. `read` is called on every `resources/read`.
 *
 * @category constructors
 * @since 0.2.0
 */
export const make = (options: Omit<Resource, "_tag">): Resource => ({ _tag: "Resource", ...options })

/**
 * A resource template (see {@link Template}).
 *
 * @category constructors
 * @since 0.2.0
 */
export const template = (options: Omit<Template, "_tag">): Template => ({ _tag: "Template", ...options })
