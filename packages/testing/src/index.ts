/**
 * @rolecraft/testing — test layers that replace Rolecraft's real dependencies
 * and are built with the same constructors, so the whole pipeline runs under
 * test.
 *
 * @since 0.1.0
 */
export * as ChatCompletionsServer from "./ChatCompletionsServer.ts"
export * as HttpRoutes from "./HttpRoutes.ts"
export * as InMemoryMcp from "./InMemoryMcp.ts"
export * as ScriptedModel from "./ScriptedModel.ts"
