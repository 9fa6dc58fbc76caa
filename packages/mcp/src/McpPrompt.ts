/**
 * Prompts an MCP server offers (`prompts/list`, `prompts/get`): templates a
 * person picks in their MCP client, filled with arguments, giving messages
 * to start a conversation with. `Mcp.serve` offers one per role, made from
 * its identity and goals ({@link fromRole}), and those an author declares
 * ({@link make}) as `prompts`.
 *
 * @example
 * ```ts
 * import { McpPrompt } from "@rolecraft/mcp"
 *
 * const plan = McpPrompt.make({
 *   name: "plan_trip",
 *   description: "Plan a trip to a city",
 *   arguments: { city: { description: "Where to", required: true }, pace: { values: ["slow", "fast"] } },
 *   messages: ({ city, pace }) => [{ role: "user", content: `Plan a ${pace ?? "slow"} trip to ${city}.` }]
 * })
 * ```
 *
 * @since 0.2.0
 */
import type { Role, ToolContent } from "@rolecraft/core"
import type * as Effect from "effect/Effect"

/**
 * One argument of a prompt: a `description`, whether it is `required`
 * (default `false`), and for an argument with a fixed set of values, the
 * `values` (`completion/complete` offers those that start with what the
 * client typed). Arguments arrive as strings.
 *
 * @category models
 * @since 0.2.0
 */
export interface Argument {
  readonly description?: string | undefined
  readonly required?: boolean | undefined
  readonly values?: ReadonlyArray<string> | undefined
}

/**
 * One message of a prompt: its `role` and its content, a string (a text
 * block) or any content block (image, audio, embedded resource, resource
 * link; see `ToolContent.Block`).
 *
 * @category models
 * @since 0.2.0
 */
export interface Message {
  readonly role: "user" | "assistant"
  readonly content: string | ToolContent.Block
}

/**
 * A prompt: `name`, optional `title` and `description`, its `arguments`, and
 * `messages`, given the arguments the client sent (a required one is always
 * there; `prompts/get` without it is a JSON-RPC error naming it).
 *
 * @category models
 * @since 0.2.0
 */
export interface McpPrompt {
  readonly name: string
  readonly title?: string | undefined
  readonly description?: string | undefined
  readonly arguments?: Readonly<Record<string, Argument>> | undefined
  readonly messages: (
    args: Readonly<Record<string, string | undefined>>
  ) => ReadonlyArray<Message> | Effect.Effect<ReadonlyArray<Message>, unknown>
}

/**
 * A prompt (see {@link McpPrompt}).
 *
 * @category constructors
 * @since 0.2.0
 */
export const make = (prompt: McpPrompt): McpPrompt => prompt

/**
 * The prompt of a role: named after the role, described by its goal, with
 * one user message that states its identity (name, goal, domain) and its
 * `spec.goals`, and an optional `task` argument appended as the request.
 *
 * @category constructors
 * @since 0.2.0
 */
export const fromRole = (role: Role.Any): McpPrompt => {
  const { name, goal, domain } = role.identity
  const goals = role.spec.goals ?? []
  return {
    name,
    description: goal,
    arguments: { task: { description: `What to ask the ${name} role to do` } },
    messages: ({ task }) => [
      {
        role: "user",
        content: [
          `You are ${name}, working in ${domain}. Your goal: ${goal}.`,
          ...(goals.length === 0 ? [] : ["Your goals:", ...goals.map((line) => `- ${line}`)]),
          ...(task === undefined || task === "" ? [] : ["", task])
        ].join("\n")
      }
    ]
  }
}
