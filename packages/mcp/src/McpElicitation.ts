/**
 * What an MCP client answers when a server asks its user for something
 * (`elicitation/create`): a form to fill (`requestedSchema`, a flat object
 * of strings, numbers, booleans and enums) or a URL to visit. The user
 * provides the service; without one `McpClientSdk` declines every request
 * (the server is told the user declined, and the tool decides what that
 * means).
 *
 * On `accept`, the client fills in the defaults the form declares for the
 * fields the answer leaves out.
 *
 * @example
 * ```ts
 * import { McpClientSdk, McpElicitation } from "@rolecraft/mcp"
 * import { Effect, Layer } from "effect"
 *
 * const client = McpClientSdk.layer().pipe(
 *   Layer.provide(McpElicitation.layer(() => Effect.succeed({ action: "decline" })))
 * )
 * ```
 *
 * @since 0.2.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/**
 * One request: `server` is the action key of the server asking, `message`
 * what it asks, `mode` `"form"` (with `requestedSchema`) or `"url"` (with
 * `url`).
 *
 * @category models
 * @since 0.2.0
 */
export interface Request {
  readonly server: string
  readonly message: string
  readonly mode: "form" | "url"
  readonly requestedSchema?: Readonly<Record<string, unknown>> | undefined
  readonly url?: string | undefined
}

/**
 * The answer: `accept` (with the form's `content`), `decline` (the user said
 * no) or `cancel` (the user dismissed it).
 *
 * @category models
 * @since 0.2.0
 */
export type Response =
  | {
      readonly action: "accept"
      readonly content?: Readonly<Record<string, string | number | boolean | ReadonlyArray<string>>> | undefined
    }
  | { readonly action: "decline" }
  | { readonly action: "cancel" }

/**
 * The service: answers one request. It cannot fail: a user that cannot be
 * asked is a `cancel`.
 *
 * @category services
 * @since 0.2.0
 */
export class McpElicitation extends Context.Service<
  McpElicitation,
  { readonly elicit: (request: Request) => Effect.Effect<Response> }
>()("@rolecraft/mcp/McpElicitation") {}

/**
 * The default: declines every request.
 *
 * @category layers
 * @since 0.2.0
 */
export const layerDecline: Layer.Layer<McpElicitation> = Layer.succeed(
  McpElicitation,
  McpElicitation.of({ elicit: () => Effect.succeed({ action: "decline" }) })
)

/**
 * A service from a function (e.g. one that asks the user in a terminal).
 *
 * @example
 * ```ts
 * import { McpClientSdk, McpElicitation } from "@rolecraft/mcp"
 * import { Effect, Layer } from "effect"
 *
 * // Accepts every form with its defaults.
 * const client = McpClientSdk.layer().pipe(
 *   Layer.provide(McpElicitation.layer(() => Effect.succeed({ action: "accept", content: {} })))
 * )
 * ```
 *
 * @category layers
 * @since 0.2.0
 */
export const layer = (elicit: (request: Request) => Effect.Effect<Response>): Layer.Layer<McpElicitation> =>
  Layer.succeed(McpElicitation, McpElicitation.of({ elicit }))
