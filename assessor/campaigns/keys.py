"""Topics' stored keys live with the models (assessor.models.keys); imported here too by name."""

from assessor.models.keys import KEY_SEPARATOR, TopicIdRefused, published_id, topic_id_checked, topic_key, topic_keys

__all__ = ["KEY_SEPARATOR", "TopicIdRefused", "published_id", "topic_id_checked", "topic_key", "topic_keys"]
