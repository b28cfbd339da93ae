// A CustomResourceDefinition's openAPIV3Schema applied to a resource, as the API server's strict field
// validation does, for the part of the schema language the worker controller's CRDs use: types (with
// int-or-string), required, enum, properties (an unknown field is an error unless the schema keeps
// unknown fields), additionalProperties, items, min/max, lengths, pattern. Not CEL rules
// (x-kubernetes-validations): the test checks those it relies on by hand.
type Schema = {
  type?: string;
  required?: string[];
  enum?: unknown[];
  properties?: Record<string, Schema>;
  additionalProperties?: Schema | boolean;
  items?: Schema;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  maxItems?: number;
  pattern?: string;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
};
type Crd = {
  spec: { names: { kind: string }; versions: { name: string; schema: { openAPIV3Schema: Schema } }[] };
};

function typeError(schema: Schema, value: unknown): string | undefined {
  if (schema['x-kubernetes-int-or-string'])
    return Number.isInteger(value) || typeof value === 'string' ? undefined : 'must be an integer or a string';
  const ok: Record<string, (v: unknown) => boolean> = {
    object: (v) => typeof v === 'object' && v !== null && !Array.isArray(v),
    array: Array.isArray,
    string: (v) => typeof v === 'string',
    integer: Number.isInteger,
    number: (v) => typeof v === 'number',
    boolean: (v) => typeof v === 'boolean',
  };
  if (!schema.type || !ok[schema.type]) return undefined;
  return ok[schema.type](value) ? undefined : `must be ${schema.type === 'integer' ? 'an' : 'a'} ${schema.type}`;
}

function scalarErrors(schema: Schema, value: unknown): string[] {
  const errors: string[] = [];
  if (schema.enum && !schema.enum.includes(value)) errors.push(`must be one of ${schema.enum.join(', ')}`);
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) errors.push(`must be at least ${schema.minimum}`);
    if (schema.maximum !== undefined && value > schema.maximum) errors.push(`must be at most ${schema.maximum}`);
  }
  if (typeof value === 'string') {
    if (schema.minLength !== undefined && value.length < schema.minLength)
      errors.push(`is shorter than ${schema.minLength}`);
    if (schema.maxLength !== undefined && value.length > schema.maxLength)
      errors.push(`is longer than ${schema.maxLength}`);
    if (schema.pattern && !new RegExp(schema.pattern).test(value)) errors.push(`must match ${schema.pattern}`);
  }
  return errors;
}

function objectErrors(schema: Schema, value: Record<string, unknown>, path: string): string[] {
  const errors = (schema.required ?? []).filter((k) => !(k in value)).map((k) => `${path}.${k}: is required`);
  for (const [key, child] of Object.entries(value)) {
    const childSchema =
      schema.properties?.[key] ??
      (typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined);
    const open =
      schema['x-kubernetes-preserve-unknown-fields'] ||
      schema.additionalProperties === true ||
      (!schema.properties && schema.additionalProperties === undefined);
    if (childSchema) errors.push(...schemaErrors(childSchema, child, `${path}.${key}`));
    else if (!open) errors.push(`${path}.${key}: is not a field of the schema`);
  }
  return errors;
}

/** Every way `value` breaks `schema`, each as `<path>: <rule>`; empty when it conforms. */
export function schemaErrors(schema: Schema, value: unknown, path = ''): string[] {
  const wrongType = typeError(schema, value);
  if (wrongType) return [`${path || '.'}: ${wrongType}`];
  const errors = scalarErrors(schema, value).map((e) => `${path || '.'}: ${e}`);
  if (Array.isArray(value)) {
    if (schema.maxItems !== undefined && value.length > schema.maxItems)
      errors.push(`${path}: has more than ${schema.maxItems} items`);
    if (schema.items) value.forEach((v, i) => errors.push(...schemaErrors(schema.items!, v, `${path}[${i}]`)));
  } else if (schema.type === 'object' && typeof value === 'object' && value !== null) {
    errors.push(...objectErrors(schema, value as Record<string, unknown>, path));
  }
  return errors;
}

/** The served schema of `crd` for `apiVersion` (`<group>/<version>`). */
export function crdSchema(crd: Crd, apiVersion: string): Schema {
  const version = crd.spec.versions.find((v) => apiVersion.endsWith(`/${v.name}`));
  if (!version) throw new Error(`${crd.spec.names.kind}: no version ${apiVersion}`);
  return version.schema.openAPIV3Schema;
}
