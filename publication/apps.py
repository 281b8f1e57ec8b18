from django.apps import AppConfig
from django.utils.translation import pgettext_lazy


class PublicationConfig(AppConfig):
    name = "publication"
    verbose_name = pgettext_lazy("app", "发布")

    def ready(self) -> None:
        # The composition root: the preview's highlights read cited passages from
        # Publication's store without citations importing publication.
        from citations.highlights import register_passage_source
        from publication.passages import cited_passages, passage_annotations

        register_passage_source(cited_passages, passage_annotations)
