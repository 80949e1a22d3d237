import { plainErrors, plainMessage } from '../../src/web/plain-messages';

describe('the dashboard’s plain words for validation messages', () => {
  test('when a message names an API parameter then the page says it in words; other messages are kept', () => {
    expect(plainMessage('The contact type id field is required.')).toBe('Choose a contact type.');
    expect(plainMessage('The selected unsubscribe group id is invalid.')).toBe('Choose an unsubscribe group from the list.');
    expect(plainMessage('The schedule time field is required when schedule type is 1.')).toBe('Choose the time to send it at.');
    expect(plainMessage('The select operator.2 field is required.')).toBe('Fill in the comparison of this condition.');
    expect(plainMessage('The value2.1 must be a date.')).toBe('The second value must be a date.');
    expect(plainMessage('The subject field is required.')).toBe('The subject field is required.');
    expect(plainErrors({ contact_type_id: ['The contact type id field is required.'], 'value.0': ['The value.0 must be a number.'] })).toEqual({
      contact_type_id: ['Choose a contact type.'],
      'value.0': ['The value must be a number.'],
    });
  });
});
