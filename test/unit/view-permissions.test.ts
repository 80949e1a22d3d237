import { createViewEnvironment } from '../../src/web/views';

/** can() in the dashboard's templates: the permission declaration, asked for the signed-in person's role. */
describe('can() in templates', () => {
  const env = createViewEnvironment();
  const render = (template: string, context: Record<string, unknown>) => env.renderString(template, context);

  test('when a template asks can() then it answers from the declaration for the signed-in person\'s role', () => {
    const asks = "{{ can('audience', 'write') }} {{ can('audience') }} {{ can('team') }}";
    expect(render(asks, { member: { role: 'analyst' } })).toBe('false true false');
    expect(render(asks, { member: { role: 'editor' } })).toBe('true true false');
    expect(render(asks, { member: { role: 'admin' } })).toBe('true true true');
  });

  test('when a template names an area or ability the declaration lacks, or asks with nobody signed in, then the render fails saying why', () => {
    expect(() => render("{{ can('audiences', 'write') }}", { member: { role: 'owner' } })).toThrow(/no such area/);
    expect(() => render("{{ can('audience', 'delete') }}", { member: { role: 'owner' } })).toThrow(/'read' or 'write'/);
    expect(() => render("{{ can('audience') }}", {})).toThrow(/no signed-in person/);
  });
});
