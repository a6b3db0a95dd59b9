/** MQTT topics in tests. */

/** Whether an MQTT topic filter (with + and #) matches a topic. */
export function matches(filter: string, topic: string): boolean {
  const filterLevels = filter.split('/');
  const topicLevels = topic.split('/');
  for (let i = 0; i < filterLevels.length; i++) {
    if (filterLevels[i] === '#') return true;
    if (i >= topicLevels.length || (filterLevels[i] !== '+' && filterLevels[i] !== topicLevels[i])) return false;
  }
  return filterLevels.length === topicLevels.length;
}
