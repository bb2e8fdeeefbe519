"""The stand-ins of the dock and task tests keep the signatures of what they stand in for.

A stand-in core method takes exactly the parameters of the ``polytopo.plugin.runs``
function of its name (names, keyword-only markers, defaults), since the dock calls them
with keywords; a stand-in that forwards ``*args, **kwargs`` to the real core is exempt.
Feedback stand-ins accept the calls ``QgsProcessingFeedback`` accepts (the runs call
them positionally: the same required and optional positional parameters), the notifier
the calls of the plugin's message-bar notifier, the card reader that of ``read_card``.
"""

import ast
import inspect

import pytest
import stand_ins
from polytopo_testing import RecordingNotifier

CORE_STAND_INS = [stand_ins.StandInCore, stand_ins.SlowCore, stand_ins.VectorizeCore, stand_ins.CancelInExport,
                  stand_ins.CancelInEvaluation]
FEEDBACK_STAND_INS = [stand_ins.RecordingFeedback, stand_ins.CancelingFeedback]


def _public_methods(cls):
    return {name: member for name, member in inspect.getmembers(cls, inspect.isfunction) if not name.startswith("_")}


def _without_self(function):
    signature = inspect.signature(function)
    return signature.replace(parameters=list(signature.parameters.values())[1:])


def _forwards(signature):
    kinds = {p.kind for p in signature.parameters.values()}
    return {inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD} <= kinds


def _sip_signature(method):
    """The signature a SIP-wrapped QGIS method shows in the first line of its docstring, without ``self``."""
    first_line = method.__doc__.splitlines()[0]
    arguments = ast.parse(f"def {first_line}: pass").body[0].args
    defaults = [None] * (len(arguments.args) - len(arguments.defaults)) + arguments.defaults
    return inspect.Signature([
        inspect.Parameter(argument.arg, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                          default=inspect.Parameter.empty if default is None else ast.literal_eval(default))
        for argument, default in zip(arguments.args[1:], defaults[1:])])


def _positional_shape(signature):
    """``(required, optional)`` counts of positional parameters."""
    positional = [p for p in signature.parameters.values()
                  if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    required = sum(p.default is inspect.Parameter.empty for p in positional)
    return required, len(positional) - required


@pytest.mark.parametrize("stand_in", CORE_STAND_INS, ids=lambda cls: cls.__name__)
def test_core_stand_ins_take_the_parameters_of_the_real_core(stand_in):
    from polytopo.plugin import runs

    methods = _public_methods(stand_in)
    assert methods, f"{stand_in.__name__} stands in for no core function"
    for name, method in methods.items():
        assert name in runs.__all__, f"{stand_in.__name__}.{name}: the real core has no {name}"
        mine = _without_self(method)
        if not _forwards(mine):
            assert mine == inspect.signature(getattr(runs, name)), f"{stand_in.__name__}.{name}"


@pytest.mark.parametrize("stand_in", FEEDBACK_STAND_INS, ids=lambda cls: cls.__name__)
def test_feedback_stand_ins_accept_the_calls_of_qgs_processing_feedback(qgis_app, stand_in):
    from qgis.core import QgsProcessingFeedback

    for name, method in _public_methods(stand_in).items():
        real = getattr(QgsProcessingFeedback, name, None)
        assert real is not None, f"{stand_in.__name__}.{name}: QgsProcessingFeedback has no {name}"
        assert _positional_shape(_without_self(method)) == _positional_shape(_sip_signature(real)), \
            f"{stand_in.__name__}.{name}"


def test_the_notifier_stand_in_takes_the_calls_of_the_plugins_notifiers(qgis_app):
    from polytopo.plugin.gui.tasks import MessageBarNotifier

    mine, real = _public_methods(RecordingNotifier), _public_methods(MessageBarNotifier)
    assert set(mine) == set(real)
    assert all(_without_self(mine[name]) == _without_self(real[name]) for name in mine)


def test_the_card_reader_stand_in_takes_the_parameters_of_read_card():
    from polytopo.models import read_card

    assert inspect.signature(stand_ins.fake_card) == inspect.signature(read_card)


def test_the_sip_signature_reader_reads_defaults():
    from qgis.core import QgsProcessingFeedback

    assert str(_sip_signature(QgsProcessingFeedback.reportError)) == "(error, fatalError=False)"
