<!DOCTYPE qgis PUBLIC 'http://mrcc.com/qgis.dtd' 'SYSTEM'>
<!-- PolyTopo: reference holes no prediction matched; label: area. Labels are off; turn them on in Layer Properties › Labels. -->
<qgis version="3.22.0" styleCategories="Symbology|Labeling" labelsEnabled="0">
  <renderer-v2 type="RuleRenderer" symbollevels="0" forceraster="0" enableorderby="0">
    <rules key="root">
      <rule key="all" filter="ELSE" symbol="0" label="missed hole: reference hole without a matching predicted hole"/>
    </rules>
    <symbols>
      <symbol type="fill" name="0" alpha="1" clip_to_extent="1" force_rhr="0">
        <layer class="SimpleFill" enabled="1" pass="0" locked="0">
          <Option type="Map">
            <Option name="color" type="QString" value="255,0,255,230"/>
            <Option name="outline_style" type="QString" value="no"/>
            <Option name="style" type="QString" value="solid"/>
          </Option>
        </layer>
        <layer class="SimpleLine" enabled="1" pass="0" locked="0">
          <Option type="Map">
            <Option name="line_color" type="QString" value="122,1,119,255"/>
            <Option name="line_width" type="QString" value="1.2"/>
            <Option name="line_style" type="QString" value="solid"/>
            <Option name="ring_filter" type="QString" value="0"/>
            <Option name="joinstyle" type="QString" value="miter"/>
          </Option>
        </layer>
      </symbol>
    </symbols>
  </renderer-v2>
  <labeling type="simple">
    <settings calloutType="simple">
      <text-style fieldName="format_number(&quot;area_px2&quot;, 0) || ' px²'" isExpression="1" fontSize="8" fontSizeUnit="Point" textColor="0,0,0,255"/>
      <text-buffer bufferDraw="1" bufferSize="0.8" bufferSizeUnits="MM" bufferColor="255,255,255,255"/>
      <placement placement="1" dist="0"/>
    </settings>
  </labeling>
</qgis>
