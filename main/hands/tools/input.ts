import type { ToolOutcome } from '../types';

/** The model sent an input of the wrong shape. */
export class InputError extends Error {}

const kind = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v);

export function reqString(input: Record<string, unknown>, key: string, tool: string): string {
  const v = input[key];
  if (typeof v !== 'string') {
    throw new InputError(`Invalid input for ${tool}: "${key}" is required and must be a string (got ${v === undefined ? 'nothing' : kind(v)}).`);
  }
  return v;
}

export function optString(input: Record<string, unknown>, key: string, tool: string): string | undefined {
  const v = input[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new InputError(`Invalid input for ${tool}: "${key}" must be a string (got ${kind(v)}).`);
  return v;
}

export function optBoolean(input: Record<string, unknown>, key: string, tool: string): boolean | undefined {
  const v = input[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw new InputError(`Invalid input for ${tool}: "${key}" must be true or false (got ${kind(v)}).`);
  return v;
}

export function optNumber(input: Record<string, unknown>, key: string, tool: string): number | undefined {
  const v = input[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new InputError(`Invalid input for ${tool}: "${key}" must be a number (got ${kind(v)}).`);
  return v;
}

export const errorOutcome = (content: string, details?: Record<string, unknown>): ToolOutcome =>
  details ? { content, isError: true, details } : { content, isError: true };
