/**
 * The JSON Schema of an action's parameters as a protocol serves it — what
 * `Mcp.serve` declares as a tool's `inputSchema` — as opposed to what a
 * model is offered (`agent.tools`, which inlines every `$ref`).
 *
 * @example
 * ```ts
 * import { ToolSchema } from "@rolecraft/core"
 * import { Result, Schema } from "effect"
 *
 * // the inputSchema an MCP client is sent for these parameters
 * const schema = ToolSchema.served(Schema.Struct({ city: Schema.String, country: Schema.NonEmptyString }))
 * if (Result.isSuccess(schema)) console.log(schema.success.required) // ["city", "country"]
 * ```
 *
 * @since 0.2.0
 */
import type * as Result from "effect/Result"
import type { JsonSchemaObject } from "./LanguageModel.ts"
import { jsonSchema, type Parameters, type ToolSchemaIssue } from "./internal/tool/jsonSchema.ts"

/**
 * The served schema of an action's parameters (an Effect Schema, or a JSON
 * Schema object such as an MCP tool's `inputSchema`): JSON Schema 2020-12
 * with `$schema`, local `#/$defs/…` references kept with their `$defs`
 * (an Effect struct annotated with an `identifier` is one), every Effect
 * struct closed (`additionalProperties: false`, where Effect writes
 * `true`; a record keeps its own; a JSON Schema keeps what it says), and the
 * same cleaning as a model's projection otherwise (every object with
 * `properties`, other local `$ref`s inlined, the reserved `_approval_token`
 * left out). Fails with the issue a model's projection would (a remote or
 * dangling `$ref`, a root that is not an object, more than 10,000 nodes),
 * with its JSON `path` and `message`.
 *
 * Never offer it to a model: a closed struct there changes what some
 * providers accept.
 *
 * @example
 * ```ts
 * import { ToolSchema } from "@rolecraft/core"
 * import { Schema } from "effect"
 *
 * const Address = Schema.Struct({ city: Schema.String }).annotate({ identifier: "address" })
 * ToolSchema.served(Schema.Struct({ address: Address }))
 * // Result.succeed({ $schema: "https://json-schema.org/draft/2020-12/schema", type: "object",
 * //   properties: { address: { $ref: "#/$defs/address" } }, required: ["address"],
 * //   additionalProperties: false, $defs: { address: { type: "object", … additionalProperties: false } } })
 * ```
 *
 * @category constructors
 * @since 0.2.0
 */
export const served = (
  parameters: Parameters
): Result.Result<JsonSchemaObject, { readonly path: string; readonly message: string }> =>
  jsonSchema(parameters, { served: true }) as Result.Result<JsonSchemaObject, ToolSchemaIssue>
