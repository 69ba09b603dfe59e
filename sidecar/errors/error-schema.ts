import { z } from 'zod';

/** The one error shape (`ErrorBody` in api-error.ts) as a schema, for the OpenAPI document. */
export const errorBodySchema = z
  .strictObject({
    errors: z
      .array(
        z.strictObject({
          code: z.string().meta({ description: 'A stable, machine-readable code.' }),
          message: z.string().meta({ description: 'What went wrong, for a person.' }),
          field: z
            .string()
            .optional()
            .meta({ description: 'The field, parameter or query key at fault, when one is.' }),
        }),
      )
      .min(1),
  })
  .meta({ id: 'ErrorBody', description: 'Every refusal and error of the management API.' });
