/**
 * A chat turn's settings: its options checked once, with the defaults filled in from the agent's roles, and
 * the model the turn calls. Refuses, as VALIDATION, a `maxSteps`, `concurrency` or `maxTokens` that is not
 * an integer >= 1, an `output` that is not an Effect Schema or has no JSON Schema form, a `turnId` a store
 * cannot hold, and a turn with no `LanguageModel` provided.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import type { ValidationError } from "../../ActionError.ts"
import type { ChatOptions, ToolAnswer } from "../../Chat.ts"
import type * as StepHooks from "../../StepHooks.ts"
import * as LanguageModel from "../../LanguageModel.ts"
import type * as Resilience from "../../Resilience.ts"
import type * as Role from "../../Role.ts"
import * as StoreBoundary from "../../StoreBoundary.ts"
import * as Output from "../schema/output.ts"
import * as ChatMessages from "./messages.ts"

/** The action name model calls of a turn are made for (it names their errors and span). */
export const chatAction = "chat"

/** The name of the response format a turn's `output` schema is sent under. */
const outputName = "output"

/** A turn's options, checked, with their defaults. */
export interface Settings {
  readonly hooks: StepHooks.StepHooks<ToolAnswer> | undefined
  readonly maxSteps: number
  readonly concurrency: number
  /** `false`: the provider is asked for no parallel calls, and the calls of a reply run one at a time. */
  readonly parallelToolCalls: boolean | undefined
  /** `true`: the catalog is offered through a search tool; `false`: never; `undefined`: past the provider's limit. */
  readonly toolSearch: boolean | undefined
  readonly strict: boolean
  readonly model: string | undefined
  readonly temperature: number | undefined
  readonly maxTokens: number | undefined
  readonly policy: Resilience.Policy | undefined
  /** The `output` schema and the response format asked for with it. */
  readonly output: { readonly schema: Schema.Top; readonly format: LanguageModel.ResponseFormat } | undefined
  /** The turn's id when the options give one. */
  readonly turnId: string | undefined
}

/** A turn id from the options, checked: 1 to 1,024 characters a store can hold. */
const turnIdOf = (turnId: string | undefined): Result.Result<string | undefined, ValidationError> => {
  if (turnId === undefined) return Result.succeed(undefined)
  const problem =
    typeof turnId !== "string" || turnId.length === 0 ? "must be a non-empty string" : StoreBoundary.textProblem(turnId)
  return problem === undefined
    ? Result.succeed(turnId)
    : Result.fail(ChatMessages.invalid(chatAction, "turnId", `turnId ${problem}`))
}

const positiveInt = (
  name: string,
  value: number | undefined,
  fallback: number
): Result.Result<number, ValidationError> =>
  value === undefined
    ? Result.succeed(fallback)
    : Number.isInteger(value) && value >= 1
      ? Result.succeed(value)
      : Result.fail(ChatMessages.invalid(chatAction, name, `${name} must be an integer >= 1, got ${value}`))

const optionalPositiveInt = (
  name: string,
  value: number | undefined
): Result.Result<number | undefined, ValidationError> =>
  value === undefined ? Result.succeed(undefined) : positiveInt(name, value, value)

/** The model named by the options, else by the first role whose spec names one. */
export const modelName = (options: ChatOptions | undefined, roles: ReadonlyArray<Role.Any>): string | undefined =>
  options?.model ?? roles.find((role) => role.spec.model?.name !== undefined)?.spec.model?.name

/** A turn's settings from its options; `maxStepsDefault` is 10 for a new turn, the paused turn's on resume. */
export const settingsOf = (
  options: ChatOptions | undefined,
  roles: ReadonlyArray<Role.Any>,
  maxStepsDefault: number
): Result.Result<Settings, ValidationError> => {
  const maxSteps = positiveInt("maxSteps", options?.maxSteps, maxStepsDefault)
  if (Result.isFailure(maxSteps)) return Result.fail(maxSteps.failure)
  const concurrency = positiveInt("concurrency", options?.concurrency, 4)
  if (Result.isFailure(concurrency)) return Result.fail(concurrency.failure)
  const roleMaxTokens = roles.find((role) => role.spec.model?.maxTokens !== undefined)?.spec.model?.maxTokens
  const maxTokens = optionalPositiveInt("maxTokens", options?.maxTokens ?? roleMaxTokens)
  if (Result.isFailure(maxTokens)) return Result.fail(maxTokens.failure)
  const roleTemperature = roles.find((role) => (role.spec.model?.temperature ?? -1) >= 0)?.spec.model?.temperature
  // As for llm actions, a negative temperature (-1) keeps the client's own setting.
  const given = options?.temperature
  const temperature = given !== undefined && given >= 0 ? given : given === undefined ? roleTemperature : undefined
  const retry = options?.retry
  const policy =
    retry === undefined && options?.modelTimeout === undefined
      ? undefined
      : { retry, attemptTimeout: options?.modelTimeout }
  const output = outputOf(options?.output)
  if (Result.isFailure(output)) return Result.fail(output.failure)
  const turnId = turnIdOf(options?.turnId)
  if (Result.isFailure(turnId)) return Result.fail(turnId.failure)
  return Result.succeed({
    turnId: turnId.success,
    hooks: options?.steps,
    output: output.success,
    maxSteps: maxSteps.success,
    concurrency: options?.parallelToolCalls === false ? 1 : concurrency.success,
    parallelToolCalls: options?.parallelToolCalls,
    toolSearch: options?.toolSearch,
    strict: options?.strict ?? false,
    model: modelName(options, roles),
    temperature,
    maxTokens: maxTokens.success,
    policy
  })
}

const outputOf = (schema: Schema.Top | undefined): Result.Result<Settings["output"], ValidationError> => {
  if (schema === undefined) return Result.succeed(undefined)
  if (!Schema.isSchema(schema)) {
    return Result.fail(ChatMessages.invalid(chatAction, "output", "output must be an Effect Schema"))
  }
  const projected = Output.make(schema, outputName)
  if (Result.isFailure(projected)) {
    return Result.fail(
      ChatMessages.invalid(
        chatAction,
        "output",
        `the output schema has no JSON Schema form: ${projected.failure.message}`
      )
    )
  }
  return Result.succeed({ schema, format: projected.success.format })
}

const modelNotProvided = ChatMessages.invalid(
  chatAction,
  "",
  "LanguageModel not provided: provide a LanguageModel layer (e.g. @rolecraft/openai) to chat"
)

/** The `LanguageModel` provided to the turn, else VALIDATION. */
export const requireModel: Effect.Effect<LanguageModel.LanguageModel["Service"], ValidationError> = Effect.flatMap(
  Effect.serviceOption(LanguageModel.LanguageModel),
  (model) => (Option.isSome(model) ? Effect.succeed(model.value) : Effect.fail(modelNotProvided))
)
