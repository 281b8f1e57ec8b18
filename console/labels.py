"""Human labels of the codes the console shows (translated; the code itself is always shown too).

The browser scripts get the same labels as JSON (``json_script``), so every string a
page shows — server-rendered or built by a script — comes from the one message catalog.
"""

from typing import Any

from django.utils.translation import gettext_lazy as _

from foundation.errors import ErrorCode

RUN_STATUS = {
    "QUEUED": _("排队中"),
    "RUNNING": _("运行中"),
    "COMPLETED": _("已完成"),
    "PARTIAL": _("部分完成"),
    "FAILED": _("失败"),
    "CANCELLED": _("已取消"),
}

# The SDK's session status (lower case) next to the run's.
SESSION_STATUS = {
    "idle": _("未开始"),
    "running": _("运行中"),
    "completed": _("已完成"),
    "partial": _("部分完成"),
    "failed": _("失败"),
    "cancelled": _("已取消"),
    "error": _("出错"),
}

SOURCE_HINT = {
    "verified": _("来源已核验"),
    "sources_partial": _("部分来源已核验"),
    "sources_unverified": _("来源未核验"),
    "pending": _("来源待核验"),
    "protected": _("受保护"),
    "unknown": _("来源状态未知"),
    "none": _("无引用"),
}

# Why a run ended (runs/reasons.py); a reason that is an error code is named by the
# error's own detail (foundation/errors.py): see run_reasons().
RUN_REASON = {
    "CANCELLED_BY_USER": _("用户取消"),
    "STEP_LIMIT_REACHED": _("达到步数上限"),
    "PROVIDER_FAILED": _("模型调用失败"),
    "WORKER_LOST": _("执行进程失联"),
    "INTERNAL_ERROR": _("内部错误"),
}


def run_reasons() -> dict[str, str]:
    """Every reason a run can end with, in words: run reasons and error codes."""
    return {
        **{code.wire: str(code.default_detail) for code in ErrorCode},
        **{code: str(label) for code, label in RUN_REASON.items()},
    }


OUTCOME = {
    "COMMITTED": _("已保存"),
    "UNCHANGED": _("未变化"),
    "PREVIEWED": _("仅预览，未保存"),
    "REJECTED": _("已拒绝"),
    "SAVE_UNKNOWN": _("保存结果未知"),
}

REJECTION = {
    "EMPTY_CANDIDATE": _("内容为空"),
    "SOURCE_NOT_AUTHORIZED": _("引用了无权使用的来源"),
    "DEPENDENCY_NOT_AUTHORIZED": _("依赖的区块来源无权使用"),
    "REPLACES_TARGET_INVALID": _("要修改的区块不存在"),
    "BLOCK_REVISION_QUOTA_EXCEEDED": _("该区块的修改次数已用完"),
    "RUN_REVISION_QUOTA_EXCEEDED": _("本次运行的修改次数已用完"),
    "SAVE_FAILED": _("保存失败"),
    "SAVE_OUTCOME_UNKNOWN": _("保存结果未知"),
}

# Publication's two entries (publication/models.py PublicationAttempt.Entry).
ENTRY = {"A": _("助手文本"), "B": _("回答片段工具")}

EFFECT = {"create": _("新建区块"), "revise": _("修改区块")}

EVENT_TYPE = {
    "run.started": _("运行开始"),
    "agent.started": _("智能体开始"),
    "agent.completed": _("智能体结束"),
    "citation.created": _("检索到来源"),
    "answer.preview": _("回答预览"),
    "answer.published": _("回答已保存"),
    "answer.rejected": _("回答被拒绝"),
    "citation.verified": _("引用核验"),
    "run.completed": _("运行完成"),
    "run.partial": _("运行部分完成"),
    "run.failed": _("运行失败"),
    "run.cancelled": _("运行已取消"),
}

JOURNAL_KIND = {
    "STEP": _("步骤"),
    "TOOL_CALL": _("工具调用"),
    "TOOL_RECEIPT": _("工具回执"),
    "NOTE": _("记录"),
}

# What the source dialog says for each preview failure, with what the user can do.
PREVIEW_ERROR = {
    "RESOURCE_NOT_FOUND": _(
        "无权查看：该凭据不属于此运行的所有者（或运行不存在）。管理员自己的登录不能代替所有者查看来源；"
        "请输入运行所有者本人的令牌。"
    ),
    "AUTHENTICATION_REQUIRED": _("令牌无效或已被吊销。请向运行所有者取得当前有效的令牌后再试。"),
    "CITATION_NOT_AVAILABLE": _(
        "该来源片段已不可用：编号不属于本次运行、旧运行没有保存片段摘要，或来源已不再返回该片段。"
        "请重新运行以获得新的来源。"
    ),
    "CITATION_SOURCE_CHANGED": _(
        "来源已变化，请重新运行。原片段的内容与回答时不同，不再显示旧内容。"
    ),
    "KNOWLEDGE_ACCESS_CHANGED": _("知识访问配置已变化，请重新建立业务会话后重新运行。"),
    "SECURITY_POLICY_CHANGED": _("应用的安全策略已变化，请重新建立业务会话后重新运行。"),
    "BUSINESS_PERMISSION_DENIED": _(
        "你已无权查看此应用的运行记录。如需查看，请联系应用管理员恢复业务历史权限。"
    ),
    "KNOWLEDGE_ACCESS_DENIED": _(
        "你已无权查看该来源。文档或知识的访问权限已被收回，不会显示旧内容；如需查看请申请该文档的权限。"
    ),
    "CAPABILITY_UNAVAILABLE": _(
        "该知识的精确版本已撤销，或应用对它的使用租约已失效。请改用当前发布的版本重新运行，"
        "或联系管理员续租。"
    ),
    "EVENT_CURSOR_EXPIRED": _("该运行已超出留存期限或已归档，不再提供历史来源预览。"),
    "CITATION_PREVIEW_TIMED_OUT": _(
        "来源系统在限定时间内没有响应。可以稍后再点一次“查看来源片段”。"
    ),
    "KNOWLEDGE_SOURCE_ERROR": _("来源系统返回了错误。请稍后再试，或联系来源系统的负责人。"),
    "KNOWLEDGE_SOURCE_UNAVAILABLE": _("暂时无法连接来源系统。请稍后再试。"),
    "APP_NOT_ACTIVE": _("应用已停用或暂停，暂不提供来源预览。请联系管理员恢复应用。"),
    "NETWORK_ERROR": _("网络错误，请求没有到达服务器。请检查网络后再试。"),
    "HTTP_ERROR": _("服务器返回了意外的错误。请稍后再试。"),
    "INVALID_RESPONSE": _("服务器的应答无法识别。请稍后再试。"),
    "UNKNOWN": _("查看来源片段失败。"),
}


# Why a verified source's 查看来源片段 is disabled when the page renders
# (citations.access.source_refusals); the click would still re-check every step.
SOURCE_REFUSAL = {
    "not_published": _("该知识版本已撤销，不再提供来源片段。请改用当前发布的版本重新运行。"),
    "no_current_lease": _(
        "应用对该知识版本的使用租约已失效或被收回，暂不提供来源片段。请联系管理员续租。"
    ),
    "other_tenant": _("该知识不属于此应用的租户，不提供来源片段。"),
    "document_not_readable": _("运行所有者已无权阅读该文档，不提供来源片段。"),
    "SECURITY_POLICY_CHANGED": PREVIEW_ERROR["SECURITY_POLICY_CHANGED"],
    "KNOWLEDGE_ACCESS_CHANGED": PREVIEW_ERROR["KNOWLEDGE_ACCESS_CHANGED"],
    "other": _("该来源当前不可查看。"),
}


def client_strings() -> dict[str, Any]:
    """Everything the page scripts display, in the request's language."""
    return {
        "runStatus": {k: str(v) for k, v in RUN_STATUS.items()},
        "runReason": run_reasons(),
        "sessionStatus": {k: str(v) for k, v in SESSION_STATUS.items()},
        "sourceHint": {k: str(v) for k, v in SOURCE_HINT.items()},
        "rejection": {k: str(v) for k, v in REJECTION.items()},
        "outcome": {k: str(v) for k, v in OUTCOME.items()},
        "effect": {k: str(v) for k, v in EFFECT.items()},
        "eventType": {k: str(v) for k, v in EVENT_TYPE.items()},
        "previewError": {k: str(v) for k, v in PREVIEW_ERROR.items()},
        "ui": {
            "unsaved": str(_("未保存")),
            "protected": str(_("受保护")),
            "protectedBody": str(_("该区块的来源已被收回授权，正文不予显示。")),
            "revisionRejected": str(_("修改被拒绝")),
            "rejectedNewBlock": str(_("新区块被拒绝")),
            "truncated": str(_("已截断")),
            "waitingVerification": str(
                _("最终核验完成前，引用标记按普通文字显示，不提供来源入口。")
            ),
            "noVerifiedSources": str(_("没有已核验的来源。")),
            "noUnverified": str(_("没有未核验的引用。")),
            "viewExcerpt": str(_("查看来源片段")),
            "page": str(_("第 %(page)s 页")),
            "locator": str(_("位置 %(start)s–%(end)s")),
            "loading": str(_("正在重新授权并读取来源…")),
            "needToken": str(
                _(
                    "需要运行所有者的令牌才能查看来源片段。管理员的登录不能代替所有者；"
                    "请在下方输入所有者令牌（只保存在本页内存中）。"
                )
            ),
            "tokenInUse": str(_("正在使用所有者令牌（只保存在本页内存中）。")),
            "noTokenForRun": str(_("请先在左侧输入运行所有者的令牌。")),
            "tokenServerChecked": str(_("开始运行时由服务器验证令牌及其所有者。")),
            "tokenEmpty": str(_("尚未输入令牌。")),
            "needOwner": str(_("请先输入本应用成员的有效令牌。")),
            "needQuestion": str(_("请输入问题。")),
            "starting": str(_("正在创建运行…")),
            "streamError": str(_("事件流中断")),
            "createError": str(_("无法创建运行")),
            "verifiedCount": str(_("已核验 %(verified)s 个，未核验 %(unverified)s 个")),
            "verificationPending": str(_("等待最终核验")),
            "noEvents": str(_("还没有事件。")),
            "noBlocks": str(_("还没有回答区块。")),
            "cancelRequested": str(_("已请求取消")),
            "ownerMismatch": str(
                _("该令牌不属于这次运行的所有者，无法读取事件。请输入所有者本人的令牌。")
            ),
            "excerptScope": str(_("检索片段（不是完整原文）")),
            "sourceVersion": str(_("原文版本")),
            "unverifiedMarker": str(_("来源未核验的引用标记")),
            "errorCode": str(_("错误代码")),
            "aborted": str(_("已取消读取。")),
            "elapsed": str(_("用时 %(seconds)s 秒")),
            "pinnedVersion": str(_("应用固定版本")),
        },
    }


EVALUATION_STATUS = {
    "QUEUED": _("排队中"),
    "RUNNING": _("评测中"),
    "DONE": _("已完成"),
    "FAILED": _("失败"),
}

# The measures of an evaluation (evaluation/runner.py summarize), in the order the
# summary table shows them; rates are {ok, total, rate}, the rest seconds or counts.
EVALUATION_MEASURES = {
    "passed": _("通过的问题"),
    "fact_hit": _("首个区块含预期事实"),
    "fact_items": _("找到的预期条目"),
    "whole_lists_tables": _("列表与表格完整回答"),
    "not_found": _("应答“未找到”且无已核验引用"),
    "unanswerable_not_found": _("相关但无答案的问题 → 未找到"),
    "off_topic_not_found": _("无关问题 → 未找到"),
    "false_not_found": _("可回答却答“未找到”"),
    "figure_precision": _("数字精确率"),
    "verified_rate": _("已核验引用比例"),
    "document_accuracy": _("引用文档正确"),
    "page_accuracy": _("引用页码正确"),
    "unused_retrieval": _("未使用的检索结果"),
    "citations_per_answer": _("每个回答的引用数"),
    "first_block_p50_s": _("首个区块 p50（秒）"),
    "run_p50_s": _("运行用时 p50（秒）"),
    "run_p95_s": _("运行用时 p95（秒）"),
    "errors": _("未能开始的运行"),
}
# The few shown for each past evaluation, so the trend across versions reads at a glance.
EVALUATION_TREND = ("passed", "fact_hit", "not_found", "figure_precision", "verified_rate")
